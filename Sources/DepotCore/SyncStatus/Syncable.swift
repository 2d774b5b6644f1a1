/// A document that carries its sync status in a property. Depot keeps the property and the
/// record's status in step: parking stores the property's value as it is (`.undetermined`
/// too, as GarageStorage does), retrieving sets the property from the record, and
/// ``DocumentTransaction/setSyncStatus(_:for:ids:)`` changes both. Syncable types get a status
/// index automatically.
public protocol Syncable: Document {
    /// The document's sync status.
    var syncStatus: SyncStatus { get set }
}

extension Document {
    /// Whether documents of this type are listed in the sync-status index (true for
    /// ``Syncable`` types; override to track others). Every record carries its status either way.
    public static var tracksSyncStatus: Bool { Self.self is any Syncable.Type }
}
