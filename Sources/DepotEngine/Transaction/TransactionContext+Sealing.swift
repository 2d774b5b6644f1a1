/// Whether the store seals (encrypts) its records, recorded in the store itself: a handle
/// opened without the record transform must not write plain records beside sealed ones (they
/// would replace sealed records with readable text, and the key's holder could not read them).
///
/// The meta record `store/sealed` (``StoreLayout/sealedRecordsKey``) is written by the first
/// write of a handle with a transform, which also bumps the schema version so that other
/// handles and processes look again; a handle without one refuses to write while it is there.
extension TransactionContext {
    /// Checks, before the first record this transaction writes or deletes, that this handle may
    /// change the store's records: throws ``DepotError/Code/transformRequired`` when the store is
    /// sealed and this handle has no transform; records the seal at the first write of a handle
    /// with one. Called by every entry point of the record pipeline (``sealingChecked`` makes
    /// it once per transaction; a rolled-back savepoint resets it with what it did).
    @inline(__always)
    func checkSealingOnce() throws {
        if _slowPath(!sealingChecked) { try checkSealing() }
    }

    private func checkSealing() throws {
        let version = try schemaVersion()
        // What this transaction changed (its own marker, a bumped version) is not the store's
        // until it commits: nothing read then is remembered, nor looked up.
        var sealed = changedSchema ? nil : engine.knownSealing(version: version)
        if sealed == nil {
            let found = try metaKeyspace().map { try txn.stableValue(forKey: StoreLayout.sealedRecordsKey, in: $0) != nil } ?? false
            if !changedSchema { engine.rememberSealing(found, version: version) }
            sealed = found
        }
        if engine.hasRecordTransform {
            if sealed != true {
                let meta = try writableMeta()
                // Always a bump of its own (even after another in this transaction): handles and
                // processes that remember "not sealed" at the version they read look again.
                // Marked changed first: whatever fails after, nothing read from here on is cached.
                changedSchema = true
                schemaVersionValue = try CollectionSchema.bumpVersion(meta: meta, txn: txn)
                try txn.put([1], forKey: StoreLayout.sealedRecordsKey, in: meta)
            }
        } else if sealed == true {
            throw DepotError(code: .transformRequired,
                             message: "the store at '\(engine.driver.location)' seals (encrypts) its records: open it with its record transform (the key) to write")
        }
        sealingChecked = true
    }
}
