import CDepotAtomic
import CLMDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An LMDB environment: one folder holding `data.mdb` and `lock.mdb`, with any number of named
/// databases inside.
///
/// Open it with ``open(path:options:)``. Opening the same folder again in this process (by any
/// spelling, symlinks included) returns the same `Environment`, as LMDB allows one handle per
/// file per process; asking for other options then is an error. The environment closes when the
/// last reference goes away, or with ``close()``; after that every entry point throws
/// ``LMDBError/closed``.
///
/// **fork()**: an environment belongs to the process that opened it. In a child forked after the
/// open, every entry point throws ``LMDBError/forked`` (LMDB forbids using the handle there), and
/// ``open(path:options:)`` in the child opens the folder afresh with a handle of its own. The
/// parent's handle is never closed by the child.
///
/// ```swift
/// let env = try Environment.open(path: "./data")
/// let users = try env.openDatabase("users", key: StringCodec.self, value: StringCodec.self)
/// try env.write { txn in try txn.put("Ada", forKey: "u1", in: users) }
/// let name = try env.read { txn in try txn.get("u1", in: users) }
/// ```
///
/// `Environment` is `Sendable`: LMDB's environment handle is thread-safe, and every piece of
/// mutable Swift state is guarded (``TransactionGate`` for transactions, a lock for the database
/// handle cache). Transactions themselves are not `Sendable`: they stay on the thread that runs
/// their closure.
public final class Environment: @unchecked Sendable {
    /// The `MDB_env*`. Replaced only by the panic recovery, which runs while no transaction of
    /// this process is alive and no new one can begin (under the gate's exclusive access), so
    /// every reader of it holds the gate (a transaction, the writer or a handle use).
    // Unchecked exclusivity: written only under the gate's exclusive access (no transaction
    // alive), so no access overlaps; the dynamic check cost two runtime calls per read.
    @exclusivity(unchecked) @usableFromInline var handle: OpaquePointer
    /// The folder, as given to ``open(path:options:)`` (resolved to an absolute path).
    public let path: String
    /// The options the environment was opened with.
    public let options: EnvironmentOptions
    /// The largest key LMDB accepts in this build (``standardMaxKeySize`` with default LMDB builds).
    public let maxKeySize: Int
    /// The largest key a default LMDB build accepts (`MDB_MAXKEYSIZE`, 511 bytes): the limit
    /// checked where no environment is at hand (storage drivers, seeding, the CLI's arguments), so
    /// that keys stay portable between engines.
    public static let standardMaxKeySize = 511
    /// Whether this process's read transactions are recorded in the reader table of `lock.mdb`.
    ///
    /// `false` only for an environment opened read-only on a read-only file system: LMDB then
    /// runs without its lock file, so a process writing the same file through another mount
    /// does not see this process's snapshots and may reuse their pages while they are read.
    /// Reads are sound only while nothing writes the store (a snapshot, a backup on read-only
    /// media); otherwise what is read can mix versions or look damaged.
    public let registersReaders: Bool
    /// The process that opened the environment (see the fork note above).
    package var ownerProcessID: Int32 { gate.ownerPID }
    /// How many times the environment was reopened after `MDB_PANIC` (see ``LMDBError/panic``).
    public internal(set) var panicRecoveries: Int {
        get { databaseLock.withLock { panicRecoveryCount } }
        set { databaseLock.withLock { panicRecoveryCount = newValue } }
    }
    var panicRecoveryCount = 0
    /// Test hook: the next commit fails as if LMDB could not write the meta page (`MDB_PANIC`).
    var simulateMetaWriteFailure = false
    /// Test hook: the next ``copy(to:compact:)`` writes its copy and then fails with this code
    /// (0: no failure), as a copy does when the disk fills up.
    var simulatedCopyFailure: Int32 = 0

    @usableFromInline let gate: TransactionGate
    let databaseLock = ConditionLock(recursive: true)
    /// Database handles by name (`""` for the main database); changed under `databaseLock`.
    /// Every change publishes an immutable copy that transactions read without the lock (see
    /// ``DatabaseCacheSnapshot`` for how old copies are freed).
    var databaseCache: [String: DatabaseRecord] = [:] {
        didSet { publishDatabaseCache() }
    }
    /// The published copy of ``databaseCache`` (an unretained ``DatabaseCacheSnapshot``, kept
    /// alive by ``currentDatabaseSnapshot``), read and written atomically.
    let publishedDatabases = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: 1)
    /// The ``DatabaseCacheSnapshot/version`` of the published copy, stored after the pointer
    /// (read by ``databaseHandlesVersion`` without dereferencing the copy).
    let publishedDatabasesVersion = UnsafeMutablePointer<Int>.allocate(capacity: 1)
    /// The published copy; changed under `databaseLock`.
    var currentDatabaseSnapshot: DatabaseCacheSnapshot?
    /// Copies replaced but perhaps still being read by a look-up that began before; freed once
    /// every stripe was seen with no look-up in progress. Changed under `databaseLock`.
    var retiredDatabaseSnapshots: [DatabaseCacheSnapshot] = []
    let registryKey: EnvironmentRegistry.Key
    var asyncWriterStorage: AsyncWriter?
    let asyncWriterLock = ConditionLock()
    /// Bounds of the group-commit writer; set before the first async write.
    public let groupCommitOptions: GroupCommitOptions

    /// A database handle: its number, flags, and the generation of the number when it was
    /// opened (see ``handleGenerations``).
    struct DatabaseRecord: Sendable {
        let dbi: MDB_dbi
        let flags: DatabaseFlags
        let generation: Int
    }

    /// Per handle number (`MDB_dbi`), how many times a handle with that number was closed:
    /// LMDB reuses the number of a closed handle for the next database opened, so a
    /// ``Database`` value made before the close (its ``Database/generation`` is older) would
    /// read that other database. Bumped under `databaseLock`; read by any thread with atomics.
    let handleGenerations: UnsafeMutablePointer<Int>
    /// The number of entries of ``handleGenerations``: every handle number LMDB can give.
    let handleGenerationCount: Int

    /// The generation of handle number `dbi` now; -2 for a number LMDB never gives.
    func handleGeneration(_ dbi: UInt32) -> Int {
        guard Int(dbi) < handleGenerationCount else { return -2 }
        return cdepot_atomic_load(handleGenerations + Int(dbi))
    }

    /// A record for handle `dbi`, opened now. The caller holds `databaseLock`.
    func record(dbi: MDB_dbi, flags: DatabaseFlags) -> DatabaseRecord {
        DatabaseRecord(dbi: dbi, flags: flags, generation: handleGeneration(dbi))
    }

    /// LMDB closed handle `dbi` (a drop, or the end of the transaction that opened it without
    /// a commit): `Database` values made before no longer name a database. The caller holds
    /// `databaseLock`.
    func retireHandle(_ dbi: MDB_dbi) {
        guard Int(dbi) < handleGenerationCount else { return }
        _ = cdepot_atomic_add(handleGenerations + Int(dbi), 1)
    }

    /// The version of the LMDB library loaded at run time, such as `"LMDB 0.9.24: (July 24, 2019)"`.
    public static var libraryVersion: String { String(cString: mdb_version(nil, nil, nil)) }

    /// The version of the LMDB library loaded at run time as numbers.
    public static var libraryVersionNumbers: (major: Int, minor: Int, patch: Int) {
        var major: Int32 = 0, minor: Int32 = 0, patch: Int32 = 0
        _ = mdb_version(&major, &minor, &patch)
        return (Int(major), Int(minor), Int(patch))
    }

    /// Opens (creating if needed) the environment in the folder at `path`.
    ///
    /// When the folder is already open in this process, returns that environment, provided
    /// `options` equal the ones it was opened with.
    ///
    /// - Throws: ``LMDBError`` naming the folder when it cannot be created or opened, or when it
    ///   is not an LMDB environment; ``LMDBError/invalidArgument`` naming the option and its
    ///   allowed range when an option is out of range (``EnvironmentOptions/validate()``);
    ///   ``LMDBError/incompatible`` naming the differing options when
    ///   it is already open in this process with other options (pass the same options, or use the
    ///   open ``Environment`` itself).
    public static func open(path: String, options: EnvironmentOptions = EnvironmentOptions()) throws -> Environment {
        try options.validate()
        // A failed open leaves no folder it made behind (a full disk, a refused file): each is
        // removed again, deepest first, when it is still empty (`rmdir` never removes files).
        var created: [String] = []
        func removeCreated() { for folder in created.reversed() { _ = rmdir(folder) } }
        let absolute: String
        do {
            absolute = try Self.prepareFolder(path, options: options, created: &created)
        } catch {
            removeCreated()
            throw error
        }
        guard let st = fileStatus(absolute) else {
            let error = LMDBError(code: errno, operation: "open environment", detail: "folder '\(absolute)'")
            removeCreated()
            throw error
        }
        // The process is part of the key: a child forked after the parent opened the folder
        // must not be handed the parent's handle.
        let key = EnvironmentRegistry.Key(device: UInt64(st.st_dev), inode: UInt64(st.st_ino), process: ProcessIdentity.current)
        let env: Environment
        do {
            env = try EnvironmentRegistry.shared.environment(for: key) {
                try Environment(path: absolute, options: options, key: key)
            }
        } catch {
            removeCreated()
            throw error
        }
        let differing = options.differences(from: env.options)
        if !differing.isEmpty {
            throw LMDBError(code: LMDBError.incompatible.code, operation: "open environment",
                            detail: "'\(absolute)' is already open in this process with other options (\(differing.joined(separator: ", "))); pass the same options or use the open environment")
        }
        return env
    }

    private init(path: String, options: EnvironmentOptions, key: EnvironmentRegistry.Key) throws {
        var env: OpaquePointer?
        try check(mdb_env_create(&env), "mdb_env_create")
        guard let env else { throw LMDBError.outOfMemory }
        if let hook = Self.assertionHook { _ = mdb_env_set_assert(env, hook) }
        func fail(_ rc: Int32, _ op: String) -> LMDBError {
            mdb_env_close(env)
            return LMDBError(code: rc, operation: op, detail: "folder '\(path)'")
        }
        var rc = mdb_env_set_maxdbs(env, MDB_dbi(clamping: options.maxDatabases))
        if rc != 0 { throw fail(rc, "mdb_env_set_maxdbs") }
        rc = mdb_env_set_maxreaders(env, UInt32(clamping: options.maxReaders))
        if rc != 0 { throw fail(rc, "mdb_env_set_maxreaders") }
        rc = mdb_env_set_mapsize(env, max(min(options.mapSize, options.maxMapSize), 4096))
        if rc != 0 { throw fail(rc, "mdb_env_set_mapsize") }
        do {
            try FileValidator.validateBeforeOpen(folder: path, readOnly: options.readOnly)
            try FileValidator.checkLockFileSpace(folder: path, maxReaders: options.maxReaders)
        } catch {
            mdb_env_close(env)
            throw error
        }
        rc = mdb_env_open(env, path, options.environmentFlags, mdb_mode_t(options.fileMode))
        if rc != 0 {
            // Refused access: which file (the lock file, even to read), not just the folder.
            if rc == EACCES || rc == EPERM, let refused = FileValidator.refusedFile(folder: path, readOnly: options.readOnly) {
                mdb_env_close(env)
                throw LMDBError(code: rc, operation: "open environment", detail: refused)
            }
            throw fail(rc, "open environment")
        }
        self.handle = env
        // LMDB gives handle numbers below maxdbs plus its two core databases.
        handleGenerationCount = max(0, options.maxDatabases) + 2
        handleGenerations = .allocate(capacity: handleGenerationCount)
        handleGenerations.initialize(repeating: 0, count: handleGenerationCount)
        publishedDatabases.initialize(to: nil)
        publishedDatabasesVersion.initialize(to: 0)
        self.path = path
        self.options = options
        self.maxKeySize = Int(mdb_env_get_maxkeysize(env))
        self.registersReaders = Self.hasReaderTable(env)
        self.gate = TransactionGate(poolLimit: options.readTransactionPoolSize, ownerPID: ProcessIdentity.current)
        self.registryKey = key
        self.groupCommitOptions = options.groupCommit
        var dead: Int32 = 0
        _ = mdb_reader_check(env, &dead)
    }

    deinit {
        defer {
            publishedDatabases.deallocate()
            publishedDatabasesVersion.deallocate()
            handleGenerations.deallocate()
        }
        // In a forked child the handle is the parent's: never touch LMDB (closing it would
        // clear the parent's reader slots), only forget it.
        guard gate.isOwnerProcess else { return }
        asyncWriterStorage?.stop()
        // nil: close() already closed the handle and left the registry.
        guard let pooled = try? gate.close() else { return }
        let env = handle
        EnvironmentRegistry.shared.remove(registryKey) {
            for txn in pooled { mdb_txn_abort(txn) }
            mdb_env_close(env)
        }
    }

    /// Closes the environment now. Later use of it throws ``LMDBError/closed``, and the folder
    /// can be opened again (a new `Environment`). Closing twice does nothing.
    ///
    /// - Throws: `LMDBError.busy` when transactions are still open; nothing is closed then.
    ///   ``LMDBError/forked`` in a child process forked after the open.
    public func close() throws {
        guard let pooled = try gate.close() else { return }
        asyncWriterLock.withLock { asyncWriterStorage?.stop() }
        let env = handle
        EnvironmentRegistry.shared.remove(registryKey) {
            for txn in pooled { mdb_txn_abort(txn) }
            mdb_env_close(env)
        }
    }

    /// Whether ``close()`` was called.
    public var isClosed: Bool { gate.isClosed }

    /// Creates the folder with `directoryMode` when missing and returns its absolute path.
    /// `created`: the folders it made, outermost first.
    private static func prepareFolder(_ path: String, options: EnvironmentOptions, created: inout [String]) throws -> String {
        guard !path.isEmpty else {
            throw LMDBError(code: LMDBError.invalidArgument.code, operation: "open environment", detail: "the path is empty")
        }
        var absolute = path
        if !path.hasPrefix("/") {
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            guard getcwd(&buffer, buffer.count) != nil else {
                throw LMDBError(code: errno, operation: "open environment", detail: "cannot read the current folder")
            }
            let cwd = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            absolute = cwd + "/" + path
        }
        if !options.readOnly {
            try makeDirectories(absolute, mode: options.directoryMode, created: &created)
        }
        guard let st = fileStatus(absolute) else {
            throw LMDBError(code: errno, operation: "open environment", detail: "folder '\(absolute)'")
        }
        if (st.st_mode & S_IFMT) != S_IFDIR {
            throw LMDBError(code: ENOTDIR, operation: "open environment", detail: "'\(absolute)' is not a folder")
        }
        return absolute
    }

    private static func makeDirectories(_ path: String, mode: UInt32, created: inout [String]) throws {
        if fileStatus(path) != nil { return }
        let parent = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        if !parent.isEmpty, parent != path { try makeDirectories(parent, mode: 0o755, created: &created) }
        if mkdir(path, mode_t(mode)) != 0 {
            guard errno == EEXIST else {
                throw LMDBError(code: errno, operation: "create folder", detail: "'\(path)'")
            }
            return // made by another process meanwhile: not ours to remove
        }
        created.append(path)
        _ = chmod(path, mode_t(mode)) // exactly `mode`, whatever the umask
    }
}

/// `stat(2)` of a path, or nil (with `errno` set).
func fileStatus(_ path: String) -> stat? {
    var st = stat()
    return stat(path, &st) == 0 ? st : nil
}

extension Environment {
    /// What LMDB calls when one of its own checks fails (a damaged page of the wrong kind, say),
    /// with the assertion's text, before it prints that text and aborts the process. Set once
    /// at start-up, before any environment opens, by a program that reports the failure itself
    /// and ends the process in the hook (the `depot` CLI writes one error, JSON with `--json`,
    /// and exits with status 1); nil (the default): LMDB prints the assertion and aborts.
    package nonisolated(unsafe) static var assertionHook: (@convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> Void)?
}
