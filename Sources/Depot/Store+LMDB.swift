import DepotCore
import DepotLMDB

/// Stores in a folder: the LMDB driver's ways to open a ``Store``.
extension Store {
    /// Opens (creating if needed) the store in the folder at `path` (the LMDB driver).
    public convenience init(path: String, options: StoreOptions = StoreOptions()) throws {
        let environment = try storage { try Environment.open(path: path, options: options.environment) }
        let core = try storage { try StoreCore.core(for: LMDBDriver(environment: environment)) }
        try core.adopt(options.recordTransform)
        core.dateStrategy = options.dateStrategy
        self.init(core: core, alias: Store.defaultAlias, autosave: options.autosave)
    }

    /// A store over an environment you opened yourself (sharing it with raw key/value work),
    /// optionally passing its records through `recordTransform` (see ``RecordTransform``).
    public convenience init(environment: Environment, autosave: Bool = true, recordTransform: (any RecordTransform)? = nil) throws {
        let core = try storage { try StoreCore.core(for: LMDBDriver(environment: environment)) }
        try core.adopt(recordTransform)
        self.init(core: core, alias: Store.defaultAlias, autosave: autosave)
    }

    /// The LMDB environment under this store.
    ///
    /// - Throws: ``DepotError`` with code ``DepotError/Code/unsupported`` when the store runs on another driver.
    public var environment: Environment {
        get throws {
            guard let environment = (core.driver as? LMDBDriver)?.environment else {
                throw DepotError.unsupported("the store at '\(core.driver.location)' does not run on LMDB")
            }
            return environment
        }
    }
}

extension DocumentTransaction {
    /// The underlying LMDB transaction, for mixing raw key/value work in databases of your own
    /// into the same commit (nil when the store runs on another storage driver).
    ///
    /// Unsafe because nothing of the document layer watches it: what you write there has no
    /// checksum, index, change set or record transform. Depot's own databases (names starting
    /// `depot.`, ``Store/isReservedDatabaseName(_:)``) are refused through it — opening one, or
    /// writing to one with a handle from elsewhere, throws `LMDBError` `permissionDenied` — for
    /// the rest of this transaction.
    public var unsafeLMDBTransaction: Transaction? {
        guard let txn = context.baseTransaction as? Transaction else { return nil }
        txn.refusedDatabasePrefix = StoreLayout.reservedPrefix
        return txn
    }

    /// The underlying LMDB transaction (see ``unsafeLMDBTransaction``).
    @available(*, deprecated, renamed: "unsafeLMDBTransaction")
    public var lmdbTransaction: Transaction? { unsafeLMDBTransaction }
}
