/// Whether the store seals (encrypts) its records, recorded in the store itself: a handle
/// opened without the record transform must not write plain records beside sealed ones (they
/// would replace sealed records with readable text, and the key's holder could not read them).
///
/// The meta record `store/sealed` (``StoreLayout/sealedRecordsKey``) is written by the first
/// write of a handle with a transform, which also bumps the schema version so that other
/// handles and processes look again; a handle without one refuses to write while it is there.
extension TransactionContext {
    /// Checks, before a record is written, that this handle may write the store's records as
    /// it would: throws ``DepotError/Code/transformRequired`` when the store is sealed and this
    /// handle has no transform; records the seal at the first write of a handle with one.
    func checkSealing() throws {
        let version = try schemaVersion()
        var sealed = engine.knownSealing(version: version)
        if sealed == nil {
            let found = try metaKeyspace().map { try txn.stableValue(forKey: StoreLayout.sealedRecordsKey, in: $0) != nil } ?? false
            engine.rememberSealing(found, version: version)
            sealed = found
        }
        if engine.hasRecordTransform {
            if sealed == true { return }
            try txn.put([1], forKey: StoreLayout.sealedRecordsKey, in: try writableMeta())
            if !changedSchema {
                schemaVersionValue = try CollectionSchema.bumpVersion(meta: try writableMeta(), txn: txn)
                changedSchema = true
            }
        } else if sealed == true {
            throw DepotError(code: .transformRequired,
                             message: "the store at '\(engine.driver.location)' seals (encrypts) its records: open it with its record transform (the key) to write")
        }
    }
}
