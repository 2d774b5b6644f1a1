import CLMDB

/// How an ``Environment`` is opened.
///
/// The defaults are safe: every commit is durable (one `fdatasync` per write transaction),
/// files are private to their owner (data and lock files `0600`, folder `0700`), and the map
/// grows on demand from ``mapSize`` up to ``maxMapSize``.
public struct EnvironmentOptions: Sendable, Hashable {
    /// Initial size of the memory map in bytes. Rounded up to whole pages by LMDB. Defaults to
    /// ``defaultMapSize``.
    public var mapSize: Int = EnvironmentOptions.defaultMapSize
    /// The largest size automatic growth may reach. Growth doubles the map each time. It also
    /// bounds the initial map: a ``mapSize`` above it opens the map at this size (a store
    /// whose file is already larger opens at the file's size, as LMDB requires).
    public var maxMapSize: Int = 1 << 40
    /// Grow the map automatically when a closure-scoped write hits `MDB_MAP_FULL`.
    public var automaticGrowth: Bool = true
    /// Maximum number of named databases (`mdb_env_set_maxdbs`).
    public var maxDatabases: Int = 256
    /// Maximum number of reader slots, shared by every process using the file (`mdb_env_set_maxreaders`).
    public var maxReaders: Int = 126
    /// Open read-only (`MDB_RDONLY`): writes fail with `EACCES`.
    public var readOnly: Bool = false
    /// Permissions of `data.mdb` and `lock.mdb`.
    public var fileMode: UInt32 = 0o600
    /// Permissions of the environment folder when Depot creates it.
    public var directoryMode: UInt32 = 0o700
    /// Do not use read-ahead (`MDB_NORDAHEAD`): helps random reads on databases larger than RAM.
    public var noReadAhead: Bool = false
    /// How many reading threads keep a reset read transaction for reuse (reset/renew), which
    /// makes `read {}` cheap: one each, for the threads numbered below this (threads are
    /// numbered from 0 in the order they first read, and a number is reused after its thread
    /// exits). Each kept transaction holds one of ``maxReaders`` slots. 0 keeps none; values
    /// above 64 act as 64.
    public var readTransactionPoolSize: Int = 64
    /// Bounds of the group-commit writer used by async writes.
    public var groupCommit = GroupCommitOptions()
    /// Flags that trade durability for speed. Empty by default; see ``UnsafeDurabilityFlags``.
    public var unsafeDurability: UnsafeDurabilityFlags = []
    /// Where Depot logs map growth, group-commit batches and background errors (off by default).
    public var logger: DepotLogger = .disabled

    /// Creates the default options.
    public init() {}

    /// The default ``mapSize``: 16 GiB on 64-bit Linux and macOS, 1 GiB elsewhere (iOS and the
    /// other Apple systems limit a process's address space; 32-bit systems have little).
    ///
    /// The map is address space, not memory or disk: `data.mdb` grows with the data written, not
    /// with the map (unless ``UnsafeDurabilityFlags/writeMap`` is set, which sizes the file to the
    /// map, sparsely). A map that fills up makes a closure-scoped write abort, grow the map and run
    /// its closure again, so a large map means a large transaction runs its closure once.
    public static let defaultMapSize: Int = {
        #if (os(Linux) || os(macOS)) && (arch(x86_64) || arch(arm64))
        return 16 << 30
        #else
        return 1 << 30
        #endif
    }()

    /// Creates options with the most common settings.
    public init(mapSize: Int = EnvironmentOptions.defaultMapSize, maxDatabases: Int = 256, maxReaders: Int = 126, readOnly: Bool = false) {
        self.mapSize = mapSize
        self.maxDatabases = maxDatabases
        self.maxReaders = maxReaders
        self.readOnly = readOnly
    }

    /// Names of the options that differ between `self` and `other` (empty when equal).
    public func differences(from other: EnvironmentOptions) -> [String] {
        var names: [String] = []
        func compare<T: Equatable>(_ name: String, _ path: KeyPath<EnvironmentOptions, T>) {
            if self[keyPath: path] != other[keyPath: path] {
                names.append("\(name): \(self[keyPath: path]) requested, \(other[keyPath: path]) in use")
            }
        }
        compare("mapSize", \.mapSize)
        compare("maxMapSize", \.maxMapSize)
        compare("automaticGrowth", \.automaticGrowth)
        compare("maxDatabases", \.maxDatabases)
        compare("maxReaders", \.maxReaders)
        compare("readOnly", \.readOnly)
        compare("fileMode", \.fileMode)
        compare("directoryMode", \.directoryMode)
        compare("noReadAhead", \.noReadAhead)
        compare("readTransactionPoolSize", \.readTransactionPoolSize)
        compare("groupCommit", \.groupCommit)
        compare("unsafeDurability", \.unsafeDurability.rawValue)
        return names
    }

    /// The LMDB flags these options pass to `mdb_env_open`. Always contains `MDB_NOTLS`.
    public var environmentFlags: UInt32 {
        var flags = UInt32(MDB_NOTLS)
        if readOnly { flags |= UInt32(MDB_RDONLY) }
        if noReadAhead { flags |= UInt32(MDB_NORDAHEAD) }
        if unsafeDurability.contains(.noSync) { flags |= UInt32(MDB_NOSYNC) }
        if unsafeDurability.contains(.noMetaSync) { flags |= UInt32(MDB_NOMETASYNC) }
        if unsafeDurability.contains(.writeMap) { flags |= UInt32(MDB_WRITEMAP) }
        if unsafeDurability.contains(.mapAsync) { flags |= UInt32(MDB_MAPASYNC) }
        return flags
    }
}

/// LMDB flags that make commits faster by giving up durability or safety.
///
/// **Each of these can lose committed writes on a crash or power loss, or corrupt the file on a
/// stray pointer write.** Depot never sets them by default. Use them only for data you can rebuild,
/// such as caches and benchmarks.
public struct UnsafeDurabilityFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// `MDB_NOSYNC`: do not flush to disk at commit. A system crash may lose the last commits
    /// and, with `writeMap`, corrupt the database.
    public static let noSync = UnsafeDurabilityFlags(rawValue: 1 << 0)
    /// `MDB_NOMETASYNC`: flush data but not the meta page at commit. A crash may undo the last commit.
    public static let noMetaSync = UnsafeDurabilityFlags(rawValue: 1 << 1)
    /// `MDB_WRITEMAP`: write through a writable memory map. Stray writes from buggy code can
    /// corrupt the file.
    public static let writeMap = UnsafeDurabilityFlags(rawValue: 1 << 2)
    /// `MDB_MAPASYNC`: with `writeMap`, flush asynchronously. A crash may lose the last commits.
    public static let mapAsync = UnsafeDurabilityFlags(rawValue: 1 << 3)
}
