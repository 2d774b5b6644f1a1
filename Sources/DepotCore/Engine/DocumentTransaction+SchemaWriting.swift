/// What schema reconciliation and collection drops in DepotEngine (`SchemaWriting`) ask of a
/// document transaction beyond the record pipeline's needs: each witness forwards to the
/// transaction context (meta records, resolved collections, the schemas in force) or the store
/// core (the record transform).
extension DocumentTransaction: SchemaWriting {
    /// The store's record transform, if any.
    package var recordTransform: (any RecordTransform)? { context.core.recordTransform }

    package func writableMeta() throws -> Keyspace { try context.writableMeta() }

    package func metaEntries(prefix: [UInt8]) throws -> [(key: [UInt8], value: [UInt8])] {
        try context.metaEntries(prefix: prefix)
    }

    package func existingTarget(alias: String, collection: String) throws -> RecordTarget? {
        try context.existingTarget(alias: alias, collection: collection)
    }

    package func forgetCollection(alias: String, collection: String) {
        context.forgetCollection(alias: alias, collection: collection)
    }

    package func schemaChanged(alias: String, collection: String, to schema: CollectionSchema) throws {
        try context.schemaChanged(alias: alias, collection: collection, to: schema)
    }

    package func schemaDropped() throws { try context.schemaDropped() }
}
