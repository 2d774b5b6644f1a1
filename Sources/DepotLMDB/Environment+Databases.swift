import CLMDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Environment {
    /// Opens the database `name` (`nil` for the main database), creating it if `create` is true.
    ///
    /// Runs its own short transaction when the database is not open yet, so call it outside
    /// `write {}`; inside a write, use ``Transaction/openDatabase(_:key:value:flags:create:)``.
    /// Handles are cached: opening the same name again is a dictionary look-up.
    ///
    /// - Throws: ``LMDBError/notFound`` (naming the database) when it does not exist and
    ///   `create` is false; ``LMDBError/incompatible`` when `flags` differ from the stored ones.
    public func openDatabase<K: LMDBCodec, V: LMDBCodec>(
        _ name: String?, key: K.Type, value: V.Type, flags: DatabaseFlags = [], create: Bool = true
    ) throws -> Database<K, V> {
        try gate.checkProcess("open database")
        if isClosed { throw TransactionGate.closedError("open database") }
        try Self.validateDatabaseName(name)
        if let cached = cachedDatabase(name, key: key, value: value) { return try Self.matching(flags, cached) }
        if create && !options.readOnly {
            if gate.callerHoldsWriter {
                throw LMDBError(code: LMDBError.deadlock.code, operation: "open database", database: name,
                                detail: "called inside write {}: use txn.openDatabase instead")
            }
            return try Self.matching(flags, write { txn in try txn.openDatabase(name, key: key, value: value, flags: flags, create: true) })
        }
        let record = try databaseLock.withLock { () throws(LMDBError) -> DatabaseRecord in
            try openDatabaseInOwnReadTransaction(name, flags: flags, mayAdoptMapSize: true)
        }
        return try Self.matching(flags, Database(record: record, name: name, maxKeySize: maxKeySize))
    }

    /// `database` when `flags` asked for nothing in particular or for what it is; else
    /// ``LMDBError/incompatible`` (LMDB opens an existing database with its stored flags,
    /// whatever was asked: a database asked for as `dupSort` that is not would overwrite values
    /// meant to be added).
    static func matching<K, V>(_ flags: DatabaseFlags, _ database: Database<K, V>) throws -> Database<K, V> {
        let persistent = DatabaseFlags(rawValue: flags.rawValue & 0x7E)
        guard persistent.isEmpty || persistent == database.flags else {
            throw LMDBError(code: LMDBError.incompatible.code, operation: "open database", database: database.name,
                            detail: "it was created with flags [\(database.flags.names)], not [\(persistent.names)] as asked")
        }
        return database
    }

    /// Refuses a name LMDB would take for another one: the empty name (the main database's
    /// place in the cache; `nil` names the main database) and a name with a NUL character
    /// (LMDB reads names as C strings: `"a\0b"` would open `"a"`).
    static func validateDatabaseName(_ name: String?) throws(LMDBError) {
        guard let name else { return }
        if name.isEmpty {
            throw LMDBError(code: LMDBError.invalidArgument.code, operation: "open database",
                            detail: "a database name must not be empty (pass nil for the main database)")
        }
        if name.utf8.contains(0) {
            throw LMDBError(code: LMDBError.invalidArgument.code, operation: "open database",
                            detail: "a database name must not contain a NUL character")
        }
    }

    /// Opens a database of raw byte keys and values.
    public func openDatabase(_ name: String?, flags: DatabaseFlags = [], create: Bool = true) throws -> Database<BytesCodec, BytesCodec> {
        try openDatabase(name, key: BytesCodec.self, value: BytesCodec.self, flags: flags, create: create)
    }

    /// Opens an existing database in a read transaction of its own that commits, and caches it.
    /// The caller holds `databaseLock`.
    func openDatabaseInOwnReadTransaction(_ name: String?, flags: DatabaseFlags, mayAdoptMapSize: Bool = false) throws(LMDBError) -> DatabaseRecord {
        if let cached = databaseCache[name ?? ""] { return cached }
        do {
            return try withHandleUse("open database") { () throws(LMDBError) in try openDatabaseOnce(name, flags: flags) }
        } catch where error.code == MDB_MAP_RESIZED && mayAdoptMapSize {
            try adoptMapSize()
            return try withHandleUse("open database") { () throws(LMDBError) in try openDatabaseOnce(name, flags: flags) }
        }
    }

    /// Runs `body`, which uses ``handle`` outside a transaction, registered with the gate: it is
    /// refused on a closed environment or in a forked child, and ``close()`` waits for it.
    func withHandleUse<R>(_ operation: StaticString, _ body: () throws(LMDBError) -> R) throws(LMDBError) -> R {
        let stripe = try gate.enterHandleUse(operation)
        defer { gate.exitHandleUse(stripe) }
        return try body()
    }

    private func openDatabaseOnce(_ name: String?, flags: DatabaseFlags) throws(LMDBError) -> DatabaseRecord {
        var own: OpaquePointer?
        try check(mdb_txn_begin(handle, nil, UInt32(MDB_RDONLY), &own), "open database", database: name)
        guard let own else { throw LMDBError.outOfMemory }
        var dbi: MDB_dbi = 0
        let rc = mdb_dbi_open(own, name, flags.rawValue, &dbi)
        if rc != 0 {
            mdb_txn_abort(own)
            throw LMDBError(code: rc, operation: "open database", database: name,
                            detail: rc == MDB_NOTFOUND ? "no database of that name exists" : nil)
        }
        var actual: UInt32 = 0
        _ = mdb_dbi_flags(own, dbi, &actual)
        try check(mdb_txn_commit(own), "open database", database: name)
        let record = self.record(dbi: dbi, flags: DatabaseFlags(rawValue: actual & 0x7E))
        databaseCache[name ?? ""] = record
        return record
    }

    func cachedDatabase<K, V>(_ name: String?, key: K.Type, value: V.Type) -> Database<K, V>? {
        publishedDatabase(name ?? "").map { Database(record: $0, name: name, maxKeySize: maxKeySize) }
    }

    /// Names of the named databases in the environment (keys of the main database that hold a
    /// sub-database). User data stored directly in the main database is not listed.
    public func databaseNames() throws -> [String] {
        try read { txn in
            let main = try txn.openDatabase(nil, key: BytesCodec.self, value: BytesCodec.self, create: false)
            var names: [String] = []
            // Unchecked: a damaged entry of the main database (an empty or oversized key) is
            // skipped by the tests below, as before, so that the other names are still listed
            // (the verifier lists them this way, then checks each database).
            try txn.forEachRawUnchecked(in: main) { key, value in
                // A sub-database record is an MDB_db struct (48 bytes) flagged F_SUBDATA in the node;
                // the node flag is not visible through the API, so check the value's size and that
                // the name opens as a database.
                if value.count == 48, let name = validUTF8String(key), !name.isEmpty {
                    names.append(name)
                }
                return true
            }
            return names
        }
    }

    // MARK: Environment facts

    /// Statistics of the main database (`mdb_env_stat`).
    public func stat() throws -> DatabaseStat {
        try withHandleUse("mdb_env_stat") { () throws(LMDBError) in
            var s = MDB_stat()
            try check(mdb_env_stat(handle, &s), "mdb_env_stat")
            return DatabaseStat(s)
        }
    }

    /// Facts about the map, the last transaction and the reader table (`mdb_env_info`).
    ///
    /// - Throws: ``LMDBError/closed`` after ``close()``, ``LMDBError/forked`` in a forked child.
    public func info() throws -> EnvironmentInfo {
        try withHandleUse("mdb_env_info") { () throws(LMDBError) in infoHoldingHandle() }
    }

    /// `mdb_env_info`; the caller holds the gate (a handle use, a transaction or exclusive access).
    func infoHoldingHandle() -> EnvironmentInfo {
        var i = MDB_envinfo()
        _ = mdb_env_info(handle, &i)
        // Clamped: the page number and transaction ID come from the file's meta page unchecked.
        return EnvironmentInfo(mapSize: Int(clamping: i.me_mapsize), lastPageNumber: Int(clamping: i.me_last_pgno),
                               lastTransactionID: Int(clamping: i.me_last_txnid), maxReaders: Int(clamping: i.me_maxreaders),
                               readersUsed: Int(clamping: i.me_numreaders))
    }

    /// Flushes buffers to disk (`mdb_env_sync`). With default options every commit is already
    /// durable; this matters only with ``UnsafeDurabilityFlags``.
    public func sync(force: Bool = true) throws {
        try withHandleUse("mdb_env_sync") { () throws(LMDBError) in
            let rc = mdb_env_sync(handle, force ? 1 : 0)
            if rc != 0 { throw LMDBError.writeFailure(code: rc, operation: "mdb_env_sync", database: nil, folder: path) }
        }
    }

    /// Writes a consistent copy of the environment into the folder `destination` (created with
    /// mode `0700` if missing; it must not already hold a `data.mdb`). With `compact`, free pages
    /// are left out and pages renumbered. The copy is written as `data.mdb.partial-…`, flushed,
    /// and only then named `data.mdb`: a copy that fails is removed, and one stopped by a signal
    /// or a crash leaves only that partial file (delete it), never a truncated `data.mdb`.
    public func copy(to destination: String, compact: Bool = false) throws {
        try withHandleUse("mdb_env_copy") { () throws(LMDBError) in try copyHoldingHandle(to: destination, compact: compact) }
    }

    private func copyHoldingHandle(to destination: String, compact: Bool) throws(LMDBError) {
        var createdFolder = false
        if access(destination, F_OK) != 0 {
            if mkdir(destination, 0o700) != 0 {
                throw LMDBError(code: errno, operation: "copy environment", detail: "cannot create folder '\(destination)'")
            }
            createdFolder = true
        }
        let file = destination + "/data.mdb"
        if access(file, F_OK) == 0 {
            throw LMDBError(code: EEXIST, operation: "copy environment", detail: "'\(file)' already exists")
        }
        // Written under a name of its own (one no other copy uses: a process may copy twice at
        // once, and a killed copy's file may carry a reused process ID) and named data.mdb only
        // once complete and flushed: a copy stopped part way never leaves a truncated data.mdb
        // that looks like a store and makes every retry fail with "already exists".
        var partial = ""
        var fd: Int32 = -1
        for _ in 0..<16 where fd < 0 {
            partial = destination + "/data.mdb.partial-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            fd = Self.createExclusive(partial)
            if fd < 0 && errno != EEXIST { break }
        }
        guard fd >= 0 else {
            let failure = errno
            if createdFolder { _ = rmdir(destination) }
            throw LMDBError(code: failure, operation: "copy environment", detail: "cannot create the copy's file '\(partial)'")
        }
        var rc = Self.copy(handle, into: fd, compact: compact)
        let simulated = databaseLock.withLock { () -> Int32 in
            defer { simulatedCopyFailure = 0 }
            return simulatedCopyFailure
        }
        if rc == 0 && simulated != 0 { rc = simulated }
        // LMDB never flushes the copy: a copy reported done could still be lost with the
        // machine. Flush the file, then (after it has its name) the folder entries.
        if rc == 0 { rc = Self.flushCopy(file: partial, folder: nil, createdFolder: false) }
        if rc == 0 { rc = Self.publish(partial, as: file) }
        let published = rc == 0
        if rc == 0 { rc = Self.flushCopy(file: file, folder: destination, createdFolder: createdFolder) }
        _ = unlink(partial)
        if rc != 0 && published { _ = unlink(file) } // its folder entry may not be durable: no backup
        if rc == EEXIST {
            // Another process made data.mdb meanwhile: it is not ours to remove.
            if createdFolder { _ = rmdir(destination) }
            throw LMDBError(code: rc, operation: "copy environment", detail: "'\(file)' already exists")
        }
        if rc != 0 {
            // A partial copy is no backup: it is gone (above), and the folder if this copy made it.
            if createdFolder { _ = rmdir(destination) }
            let outcome = createdFolder ? "the incomplete copy and its folder were removed" : "the incomplete copy was removed"
            let plain = LMDBError(code: rc, operation: "copy environment", detail: "to '\(destination)'; \(outcome)")
            guard rc == EIO || rc == ENOSPC else { throw plain }
            // A full disk is said so (with the free space); any other write failure keeps the plain text.
            let disk = LMDBError.writeFailure(code: rc, operation: "copy environment", database: nil, folder: destination,
                                              outcome: "\(outcome): free some space and copy again")
            throw disk.detail == nil ? plain : disk
        }
        _ = chmod(file, mode_t(options.fileMode))
    }

    /// A new file at `path`, created here (`O_EXCL`), open for writing; -1 with `errno` set.
    private static func createExclusive(_ path: String) -> Int32 {
        #if canImport(Glibc)
        return Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        #else
        return Darwin.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        #endif
    }

    /// Copies the environment into `fd` (`mdb_env_copyfd2`) and closes it; 0 or an errno.
    private static func copy(_ handle: OpaquePointer, into fd: Int32, compact: Bool) -> Int32 {
        let rc = mdb_env_copyfd2(handle, fd, compact ? UInt32(MDB_CP_COMPACT) : 0)
        #if canImport(Glibc)
        let closed = Glibc.close(fd) == 0 ? 0 : errno
        #else
        let closed = Darwin.close(fd) == 0 ? 0 : errno
        #endif
        return rc != 0 ? rc : closed
    }

    /// Gives the finished copy `partial` its final name `file`, never replacing a file of that
    /// name (`link`, which fails with EEXIST; `rename` after a last check where the file system
    /// has no hard links). 0 or an errno.
    private static func publish(_ partial: String, as file: String) -> Int32 {
        if link(partial, file) == 0 { return 0 }
        let failure = errno
        guard failure == EPERM || failure == ENOTSUP || failure == EOPNOTSUPP || failure == EXDEV else { return failure }
        if access(file, F_OK) == 0 { return EEXIST }
        return rename(partial, file) == 0 ? 0 : errno
    }

    /// Flushes a finished copy to stable storage: the file, its folder's entry for it and, when
    /// the copy created the folder, the parent's entry for the folder. Returns 0 or the errno of
    /// the file's flush, or of a folder's flush that failed with an I/O error: a folder that
    /// cannot be opened for reading (write-only) or a file system without folder flushes does not
    /// undo a complete copy.
    private static func flushCopy(file: String, folder: String?, createdFolder: Bool) -> Int32 {
        func flush(_ path: String, flags: Int32) -> Int32 {
            #if canImport(Glibc)
            let fd = Glibc.open(path, flags)
            guard fd >= 0 else { return errno }
            defer { _ = Glibc.close(fd) }
            #else
            let fd = Darwin.open(path, flags)
            guard fd >= 0 else { return errno }
            defer { _ = Darwin.close(fd) }
            #endif
            return fsync(fd) == 0 ? 0 : errno
        }
        var rc = flush(file, flags: O_RDONLY)
        if rc == EACCES { rc = flush(file, flags: O_WRONLY) } // a copy made under a umask without read
        guard rc == 0, let folder else { return rc }
        var folders = [folder]
        if createdFolder {
            var trimmed = Substring(folder)
            while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
            folders.append(trimmed.lastIndex(of: "/").map { $0 == trimmed.startIndex ? "/" : String(trimmed[..<$0]) } ?? ".")
        }
        // Only an I/O error counts: EACCES (a write-only folder) or EINVAL (no folder flushes) does not.
        let failures = folders.map { flush($0, flags: O_RDONLY | O_DIRECTORY) }
        return failures.contains(EIO) ? EIO : 0
    }

    /// Clears reader slots left by processes that died (`mdb_reader_check`); returns how many.
    /// Runs automatically at open and when the reader table is full.
    @discardableResult
    ///
    /// - Throws: ``LMDBError/closed`` after ``close()``, ``LMDBError/forked`` in a forked child.
    public func readerCheck() throws -> Int {
        try withHandleUse("mdb_reader_check") { () throws(LMDBError) in
            var dead: Int32 = 0
            try check(mdb_reader_check(handle, &dead), "mdb_reader_check")
            return Int(dead)
        }
    }

    /// The reader table as LMDB prints it (`mdb_reader_list`): one line per slot with the
    /// process ID, thread and the snapshot's transaction ID (`-` for a reset slot).
    ///
    /// - Throws: ``LMDBError/closed`` after ``close()``, ``LMDBError/forked`` in a forked child.
    public func readerList() throws -> [ReaderSlot] {
        try withHandleUse("mdb_reader_list") { () throws(LMDBError) in readerListHoldingHandle() }
    }

    /// Whether LMDB keeps a reader table for `env` (an open `MDB_env*`): `mdb_reader_list`
    /// reports "(no reader locks)" when it runs without a lock file (read-only file system).
    static func hasReaderTable(_ env: OpaquePointer) -> Bool {
        final class Box { var noLocks = false }
        let box = Box()
        let context = Unmanaged.passRetained(box)
        defer { context.release() }
        _ = mdb_reader_list(env, { message, ctx in
            guard let message, let ctx else { return 0 }
            if String(cString: message).hasPrefix("(no reader locks)") {
                Unmanaged<Box>.fromOpaque(ctx).takeUnretainedValue().noLocks = true
            }
            return 0
        }, context.toOpaque())
        return !box.noLocks
    }

    private func readerListHoldingHandle() -> [ReaderSlot] {
        final class Box { var lines: [String] = [] }
        let box = Box()
        let context = Unmanaged.passRetained(box)
        defer { context.release() }
        _ = mdb_reader_list(handle, { message, ctx in
            guard let message, let ctx else { return 0 }
            Unmanaged<Box>.fromOpaque(ctx).takeUnretainedValue().lines.append(String(cString: message))
            return 0
        }, context.toOpaque())
        let lastTxn = infoHoldingHandle().lastTransactionID
        return box.lines.compactMap { ReaderSlot(line: $0, lastTransactionID: lastTxn) }
    }
}

/// One entry of the reader table: a process holding (or keeping) a snapshot.
public struct ReaderSlot: Sendable, Hashable, Codable {
    /// The process that owns the slot.
    public var processID: Int
    /// The thread, as LMDB prints it (hexadecimal).
    public var thread: String
    /// The snapshot's transaction ID, or nil for a reset (idle, reusable) slot.
    public var transactionID: Int?
    /// How many commits happened since this snapshot began: the reader's age. A large age means
    /// pages that LMDB cannot reuse, so the file grows: find and end that reader.
    public var age: Int?
    /// Pages freed since this snapshot that LMDB cannot reuse while it lives; filled in by
    /// ``Environment/readersWithPinnedPages()`` (nil from ``Environment/readerList()``).
    public var pinnedPages: Int?

    init?(line: String, lastTransactionID: Int) {
        let parts = line.split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard parts.count >= 3, let pid = Int(parts[0]) else { return nil }
        processID = pid
        thread = String(parts[1])
        transactionID = Int(parts[2])
        age = transactionID.map { lastTransactionID - $0 }
    }
}

extension DatabaseFlags {
    /// The flags by name, for messages ("none" for none).
    var names: String {
        let all: [(DatabaseFlags, String)] = [(.reverseKey, "reverseKey"), (.dupSort, "dupSort"), (.integerKey, "integerKey"),
                                              (.dupFixed, "dupFixed"), (.integerDup, "integerDup"), (.reverseDup, "reverseDup")]
        let named = all.filter { contains($0.0) }.map(\.1)
        return named.isEmpty ? "none" : named.joined(separator: ", ")
    }
}
