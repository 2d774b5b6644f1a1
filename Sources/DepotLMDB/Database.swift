import CLMDB

/// How a named database is created and ordered.
public struct DatabaseFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Keys compare as strings read backwards (`MDB_REVERSEKEY`).
    public static let reverseKey = DatabaseFlags(rawValue: UInt32(MDB_REVERSEKEY))
    /// A key may hold several sorted values (`MDB_DUPSORT`). Values are then limited to ``Environment/maxKeySize`` bytes.
    public static let dupSort = DatabaseFlags(rawValue: UInt32(MDB_DUPSORT))
    /// Keys are native-endian `UInt32` or `Int`-sized unsigned integers (`MDB_INTEGERKEY`).
    public static let integerKey = DatabaseFlags(rawValue: UInt32(MDB_INTEGERKEY))
    /// With ``dupSort``: all values have the same size (`MDB_DUPFIXED`).
    public static let dupFixed = DatabaseFlags(rawValue: UInt32(MDB_DUPFIXED))
    /// With ``dupSort``: values are native-endian integers (`MDB_INTEGERDUP`).
    public static let integerDup = DatabaseFlags(rawValue: UInt32(MDB_INTEGERDUP))
    /// With ``dupSort``: values compare backwards (`MDB_REVERSEDUP`).
    public static let reverseDup = DatabaseFlags(rawValue: UInt32(MDB_REVERSEDUP))
}

/// Flags for a single put.
public struct WriteFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Fail with ``LMDBError/keyExists`` if the key is present (`MDB_NOOVERWRITE`).
    public static let noOverwrite = WriteFlags(rawValue: UInt32(MDB_NOOVERWRITE))
    /// In a ``DatabaseFlags/dupSort`` database, fail if this key/value pair is present (`MDB_NODUPDATA`).
    public static let noDupData = WriteFlags(rawValue: UInt32(MDB_NODUPDATA))
    /// The key sorts after every key in the database: a fast bulk load (`MDB_APPEND`).
    /// A key out of order fails with ``LMDBError/keyExists``.
    public static let append = WriteFlags(rawValue: UInt32(MDB_APPEND))
    /// As ``append`` for sorted duplicates (`MDB_APPENDDUP`).
    public static let appendDup = WriteFlags(rawValue: UInt32(MDB_APPENDDUP))
}

/// A handle to one database in an ``Environment``, typed by the codecs of its keys and values.
///
/// Like Rust heed's `Database<K, V>`: the codecs turn Swift values into the bytes LMDB stores.
/// Handles are plain values, valid for the life of their environment, and `Sendable`. A handle
/// kept past its database's drop (or past the end of a write that opened it and did not
/// commit) fails with ``LMDBError/badDatabase``: LMDB gives its number to the next database
/// opened, which it must never read or write.
///
/// ```swift
/// let counts = try env.openDatabase("counts", key: StringCodec.self, value: BigEndian<UInt64>.self)
/// ```
public struct Database<KeyCodec: LMDBCodec, ValueCodec: LMDBCodec>: Sendable, Hashable {
    /// The LMDB handle (`MDB_dbi`).
    public let dbi: UInt32
    /// The generation of the handle number when this handle was made (see
    /// `Environment.handleGenerations`; stored beside ``dbi``, in the same word): once LMDB
    /// closed the handle (the database was dropped, or the transaction that opened it did not
    /// commit), the number may name another database, and operations with this value fail with
    /// `MDB_BAD_DBI` instead of reading that one. ``uncheckedGeneration`` for handles rebuilt by
    /// ``init(handle:name:flags:maxKeySize:)``.
    @usableFromInline let generation: UInt32
    /// The database's name; `nil` for the main (unnamed) database.
    public let name: String?
    /// The flags the database was opened with.
    public let flags: DatabaseFlags
    /// The largest key this database accepts.
    public let maxKeySize: Int

    /// The generation of a handle rebuilt from its parts, which is not checked.
    @usableFromInline static var uncheckedGeneration: UInt32 { .max }

    @usableFromInline
    init(dbi: UInt32, name: String?, flags: DatabaseFlags, maxKeySize: Int, generation: UInt32) {
        self.dbi = dbi
        self.name = name
        self.flags = flags
        self.maxKeySize = maxKeySize
        self.generation = generation
    }

    init(record: Environment.DatabaseRecord, name: String?, maxKeySize: Int) {
        self.init(dbi: record.dbi, name: name, flags: record.flags, maxKeySize: maxKeySize, generation: UInt32(truncatingIfNeeded: record.generation))
    }

    /// Rebuilds a handle from its parts, for storage adapters that keep handles in their own
    /// types (and check them themselves). `handle` must be the ``dbi`` of a database of the
    /// same environment.
    public init(handle: UInt32, name: String?, flags: DatabaseFlags, maxKeySize: Int) {
        self.init(dbi: handle, name: name, flags: flags, maxKeySize: maxKeySize, generation: Self.uncheckedGeneration)
    }

    /// The same database seen through other codecs (the bytes stay as they are).
    public func retyped<K2: LMDBCodec, V2: LMDBCodec>(key: K2.Type, value: V2.Type) -> Database<K2, V2> {
        Database<K2, V2>(dbi: dbi, name: name, flags: flags, maxKeySize: maxKeySize, generation: generation)
    }

    /// The database with raw byte keys and values.
    public var raw: Database<BytesCodec, BytesCodec> { retyped(key: BytesCodec.self, value: BytesCodec.self) }

    /// Checks a key's size before LMDB sees it.
    @inlinable @inline(__always)
    func validateKey(_ count: Int, operation: StaticString) throws(LMDBError) {
        if _slowPath(count == 0 || count > maxKeySize) {
            throw keySizeError(count, operation: operation)
        }
        if _slowPath(flags.rawValue & UInt32(MDB_INTEGERKEY) != 0) { try validateInteger(count, of: "key", operation: operation) }
    }

    /// An `integerKey` key or `integerDup` value must be a native `UInt32` or `UInt` (4 or 8
    /// bytes): LMDB reads that many bytes whatever the size (beyond a shorter one), and sorts
    /// the others wrongly.
    @usableFromInline
    func validateInteger(_ count: Int, of what: StaticString, operation: StaticString) throws(LMDBError) {
        guard count != MemoryLayout<UInt32>.size && count != MemoryLayout<UInt>.size else { return }
        throw LMDBError(code: LMDBError.badValueSize.code, operation: "\(operation)", database: name,
                        detail: "the \(what) is \(count) bytes; an integer\("\(what)" == "key" ? "Key" : "Dup") database holds \(MemoryLayout<UInt32>.size)- or \(MemoryLayout<UInt>.size)-byte native integers")
    }

    @usableFromInline
    func keySizeError(_ count: Int, operation: StaticString) -> LMDBError {
        Self.keySizeError(count, limit: maxKeySize, operation: operation, database: name)
    }

    /// The error for a key of `count` bytes where 1...`limit` are allowed.
    @usableFromInline
    static func keySizeError(_ count: Int, limit: Int, operation: StaticString, database: String?) -> LMDBError {
        LMDBError(code: LMDBError.badValueSize.code, operation: "\(operation)", database: database,
                  detail: count == 0 ? "the key is empty" : "the key is \(count) bytes; the limit is \(limit)")
    }

    /// The database name as shown in errors.
    @usableFromInline var displayName: String { name ?? "(main)" }
}

/// Statistics of one database (`mdb_stat`) or of the environment's main database.
public struct DatabaseStat: Sendable, Hashable, Codable {
    /// Size of a database page in bytes.
    public var pageSize: Int
    /// Depth of the B-tree.
    public var depth: Int
    /// Number of internal pages.
    public var branchPages: Int
    /// Number of leaf pages.
    public var leafPages: Int
    /// Number of overflow pages (large values).
    public var overflowPages: Int
    /// Number of entries (key/value pairs, counting each duplicate).
    public var entries: Int

    /// Clamped, not converted: LMDB copies these counts from the file unchecked, and a damaged
    /// file may hold any 64-bit value.
    init(_ s: MDB_stat) {
        pageSize = Int(clamping: s.ms_psize)
        depth = Int(clamping: s.ms_depth)
        branchPages = Int(clamping: s.ms_branch_pages)
        leafPages = Int(clamping: s.ms_leaf_pages)
        overflowPages = Int(clamping: s.ms_overflow_pages)
        entries = Int(clamping: s.ms_entries)
    }
}

/// Facts about an environment (`mdb_env_info`).
public struct EnvironmentInfo: Sendable, Hashable, Codable {
    /// Size of the memory map in bytes.
    public var mapSize: Int
    /// Number of the last used page.
    public var lastPageNumber: Int
    /// ID of the last committed transaction (any process).
    public var lastTransactionID: Int
    /// Maximum number of reader slots.
    public var maxReaders: Int
    /// Number of reader slots handed out (`me_numreaders`): a high-water mark since the lock file
    /// was made, counting slots of reset, reusable transactions and of readers that have ended;
    /// ``Environment/readerList()`` lists the readers holding a snapshot now.
    public var readersUsed: Int
}
