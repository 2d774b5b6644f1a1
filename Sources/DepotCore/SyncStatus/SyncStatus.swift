/// Where a document stands with a remote copy (GarageStorage's sync status).
public enum SyncStatus: UInt8, Sendable, Codable, Hashable, CaseIterable {
    /// Never set.
    case undetermined = 0
    /// Changed locally since the last sync: parking sets this automatically.
    case notSynced = 1
    /// Being sent.
    case syncing = 2
    /// In step with the remote copy.
    case synced = 3

    /// The status kept in a record's flags (bits 1–3).
    init(recordFlags: UInt8) { self = SyncStatus(rawValue: (recordFlags >> 1) & 0x07) ?? .undetermined }
    var recordFlags: UInt8 { rawValue << 1 }
}

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
