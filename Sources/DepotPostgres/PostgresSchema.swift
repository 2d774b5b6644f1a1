/// The driver's tables in one schema, and the statements that create them.
///
/// - `keyspaces(id serial, name text unique, multi boolean)`: one row per keyspace.
/// - `entries(keyspace, key bytea, value bytea, primary key (keyspace, key))`: single-value
///   keyspaces.
/// - `multi(keyspace, key bytea, value bytea, primary key (keyspace, key, value))`: multi-value
///   keyspaces (several sorted values per key).
/// - `epoch(value bigint)`: one row, incremented by every keyspace drop; transactions read it
///   to know whether cached keyspace handles still hold (see ``KeyspaceCache``).
///
/// `bytea` compares bytes as unsigned, shortest first on a common prefix — the same order as
/// LMDB's, independent of collation. Keys and values are always bound as parameters; only the
/// validated schema name is spliced into statement text.
#if Postgres
import Foundation
struct PostgresSchema: Sendable {
    /// The quoted schema name.
    let quoted: String
    let keyspaces: String
    let entries: String
    let multi: String
    let epoch: String
    /// The `LISTEN`/`NOTIFY` channel of the schema's change log: `depot_changes_` and the schema
    /// name (at most 62 bytes, within PostgreSQL's 63 for identifiers; only lowercase letters,
    /// digits and `_`, so it needs no escaping). Stores on other schemas use other channels.
    let changeChannel: String

    /// Validates `name` (lowercase letters, digits and `_`, starting with a letter or `_`, at
    /// most 48 characters).
    init(name: String) throws {
        let bytes = Array(name.utf8)
        let valid = !bytes.isEmpty && bytes.count <= 48
            && bytes.allSatisfy { ($0 >= 0x61 && $0 <= 0x7a) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5f }
            && !(bytes[0] >= 0x30 && bytes[0] <= 0x39)
        guard valid else { throw PostgresDriverError.invalidSchemaName(name) }
        // PostgreSQL's own schemas (pg_catalog, pg_temp, pg_toast, … and information_schema)
        // hold the system's objects, never a store's tables.
        guard !name.hasPrefix("pg_"), name != "information_schema" else {
            throw PostgresDriverError.invalidConfiguration("the schema '\(name)' belongs to PostgreSQL itself (pg_… and information_schema): name another for the store")
        }
        quoted = "\"\(name)\""
        keyspaces = "\(quoted).keyspaces"
        entries = "\(quoted).entries"
        multi = "\(quoted).multi"
        epoch = "\(quoted).epoch"
        changeChannel = "depot_changes_" + name
    }

    /// The statements that create the schema and its tables (idempotent). Run them under
    /// ``setupLockKey`` so that concurrent first starts do not race.
    var setupStatements: [String] {
        [
            "CREATE SCHEMA IF NOT EXISTS \(quoted)",
            "CREATE TABLE IF NOT EXISTS \(keyspaces) (id serial PRIMARY KEY, name text NOT NULL UNIQUE, multi boolean NOT NULL)",
            "CREATE TABLE IF NOT EXISTS \(entries) (keyspace integer NOT NULL, key bytea NOT NULL, value bytea NOT NULL, PRIMARY KEY (keyspace, key))",
            "CREATE TABLE IF NOT EXISTS \(multi) (keyspace integer NOT NULL, key bytea NOT NULL, value bytea NOT NULL, PRIMARY KEY (keyspace, key, value))",
            "CREATE TABLE IF NOT EXISTS \(epoch) (one boolean PRIMARY KEY DEFAULT true CHECK (one), value bigint NOT NULL)",
            "INSERT INTO \(epoch) (value) VALUES (0) ON CONFLICT DO NOTHING",
        ]
    }

    /// An advisory lock key shared by every Depot driver setting up a schema.
    static let setupLockKey: Int64 = 0x4465_706F_7453_6574 // "DepotSet"

    /// The texts of the write path's statements, by shape (see ``StatementTexts``).
    let texts = StatementTexts()

    /// Table of a keyspace.
    func table(multiValue: Bool) -> String { multiValue ? multi : entries }
}

/// What a ``Keyspace`` handle encodes for this driver: the keyspace row's id, and whether it is
/// multi-value (the top bit).
/// The texts of statements whose SQL depends only on a few flags and counts (their shape), made
/// once per driver instead of with every statement: building a several-hundred-character
/// statement by interpolation cost more than the rest of the write path's client work for it.
///
/// `@unchecked Sendable`: `byShape` is guarded by `lock` (held for a dictionary look-up).
final class StatementTexts: @unchecked Sendable {
    private let lock = NSLock()
    private var byShape: [UInt32: String] = [:]

    /// The text of `shape` (a caller's own encoding of what varies; callers use disjoint kinds in
    /// the top byte), made by `make` the first time.
    func text(_ shape: UInt32, _ make: () -> String) -> String {
        if let known = lock.withLock({ byShape[shape] }) { return known }
        let made = make()
        lock.withLock { byShape[shape] = made }
        return made
    }

    /// Kinds of statement (the top byte of a shape).
    enum Kind: UInt32 {
        case putIfAbsentLocks = 1
        case putIfAbsentInsert = 2
        case lockedPut = 3
        case speculativeInsert = 4
        case openingLocks = 5
        case deleteLocks = 6
        case lockedDelete = 7
        case firstLocks = 8
    }

    /// A shape of `kind` from `bits` (below the top byte).
    static func shape(_ kind: Kind, _ bits: UInt32) -> UInt32 { kind.rawValue << 24 | bits & 0xFF_FFFF }
}

struct KeyspaceHandle {
    static let multiBit: UInt32 = 0x8000_0000
    let id: Int32
    let multiValue: Bool

    init(id: Int32, multiValue: Bool) {
        self.id = id
        self.multiValue = multiValue
    }

    init(_ handle: UInt32) {
        id = Int32(bitPattern: handle & ~Self.multiBit)
        multiValue = handle & Self.multiBit != 0
    }

    var raw: UInt32 { UInt32(bitPattern: id) | (multiValue ? Self.multiBit : 0) }
}
#endif
