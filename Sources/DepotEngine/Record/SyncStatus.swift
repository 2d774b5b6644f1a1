/// Where a document stands with a remote copy (GarageStorage's sync status).
///
/// Every record keeps one in its flags (the record envelope); collections that track it also list
/// their records by status in the store's sync-status index.
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
    @inlinable
    package init(recordFlags: UInt8) { self = SyncStatus(rawValue: (recordFlags >> 1) & 0x07) ?? .undetermined }

    /// This status as a record's flags (bits 1–3; the other bits clear).
    @inlinable
    package var recordFlags: UInt8 { rawValue << 1 }

    /// The case's name (`notSynced`), as `depot export` writes it.
    package var name: String {
        switch self {
        case .undetermined: "undetermined"
        case .notSynced: "notSynced"
        case .syncing: "syncing"
        case .synced: "synced"
        }
    }

    /// The status named `name` (``name``), nil for another text.
    package init?(name: String) {
        guard let status = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = status
    }
}
