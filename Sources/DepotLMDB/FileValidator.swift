#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Checks an existing `data.mdb` before LMDB maps it.
///
/// LMDB 0.9 trusts its on-disk structures: a damaged meta page can make `mdb_env_open` or the
/// first read crash the process. Depot reads both meta pages first and refuses a file whose
/// magic, version or page size do not make sense, or whose current meta page (the one LMDB
/// uses) names a last page or database roots outside the file, with
/// `LMDBError.corrupted` (or `LMDBError.invalid` for a file that is not LMDB's at all).
package enum FileValidator {
    static let magic: UInt32 = 0xBEEF_C0DE
    static let dataVersion: UInt32 = 1
    static let invalidPage = UInt64.max

    /// A meta page as read from disk.
    package struct Meta: Sendable, Hashable {
        /// The page size recorded in the meta page.
        package var pageSize: UInt32
        /// The map size recorded in the meta page.
        package var mapSize: UInt64
        /// The last used page number.
        package var lastPage: UInt64
        /// The transaction ID of the commit that wrote this meta page.
        package var transactionID: UInt64
        /// Root pages of the free-list and main databases (`UInt64.max` when empty).
        package var roots: (free: UInt64, main: UInt64)

        package static func == (a: Meta, b: Meta) -> Bool {
            a.pageSize == b.pageSize && a.mapSize == b.mapSize && a.lastPage == b.lastPage
                && a.transactionID == b.transactionID && a.roots.free == b.roots.free && a.roots.main == b.roots.main
        }
        package func hash(into h: inout Hasher) { h.combine(transactionID); h.combine(lastPage) }
    }

    /// Validates `folder/data.mdb` if it exists and is not empty. A missing or empty file is fine
    /// for a writable open (LMDB creates a new environment); a read-only open refuses an empty one.
    /// A `data.mdb` or `lock.mdb` that is not a regular file is refused (``checkFileKinds(folder:)``).
    /// Refuses to open a store whose lock file does not exist yet when the disk has no room
    /// for it. LMDB makes `lock.mdb` at its full size without writing it (a sparse file) and
    /// maps it: on a full disk the first write into the map is a SIGBUS, which kills the
    /// process, and a healthy store looks damaged. Refused here instead with `ENOSPC`, naming
    /// the file, before LMDB creates anything. (A disk that fills between this check and the
    /// open can still fault.) A read-only file system has no lock file (LMDB runs without one).
    package static func checkLockFileSpace(folder: String, maxReaders: Int) throws(LMDBError) {
        let lock = folder + "/lock.mdb"
        guard access(lock, F_OK) != 0 else { return }
        var fs = statvfs()
        guard statvfs(folder, &fs) == 0 else { return } // no folder yet: LMDB reports that
        if fs.f_flag & UInt(ST_RDONLY) != 0 { return }
        // The reader table (64 bytes a slot) and its header, in whole pages, with a page spare.
        let needed = (UInt64(max(maxReaders, 1)) * 64 + 8192 + 4095) / 4096 * 4096 + 4096
        // Root may use the blocks a file system keeps back for it.
        // Saturating: a file system (FUSE, network) may report counts whose product overflows.
        let (product, overflow) = UInt64(geteuid() == 0 ? fs.f_bfree : fs.f_bavail).multipliedReportingOverflow(by: UInt64(fs.f_frsize))
        let available = overflow ? UInt64.max : product
        if available < needed {
            throw LMDBError(code: ENOSPC, operation: "open environment",
                            detail: "no room on the disk for the lock file '\(lock)': \(available) bytes free, about \(needed) needed; free some space and open it again")
        }
    }

    package static func validateBeforeOpen(folder: String, readOnly: Bool = false) throws(LMDBError) {
        try checkFileKinds(folder: folder)
        let file = folder + "/data.mdb"
        // O_NONBLOCK: should the file be swapped for a FIFO after the check, the open still returns.
        let fd = open(file, O_RDONLY | O_NONBLOCK)
        if fd < 0 { return } // missing: LMDB creates it, or reports its own error
        defer { close(fd) }
        // Another process may be committing right now: it extends the file and then rewrites a
        // meta page, so a size taken just before a meta page was read can look too short, and a
        // meta page can be read while it is rewritten. Such a file is fine: read it again. A
        // damaged file fails all three attempts.
        var attempt = 0
        while true {
            attempt += 1
            var st = stat()
            guard fstat(fd, &st) == 0 else { return }
            if st.st_mode & S_IFMT != S_IFREG { throw notRegular(file, st.st_mode) }
            let size = UInt64(st.st_size)
            if size == 0 {
                if readOnly { throw emptyFile(file) }
                return
            }
            do {
                _ = try validate(fd: fd, fileSize: size, file: file)
                return
            } catch {
                if attempt >= 3 { throw error }
                usleep(1000)
            }
        }
    }

    /// After LMDB's open failed with `EACCES` or `EPERM`: which file it could not open as it
    /// needs, and why, for the error's detail; nil when each opens (the folder is then named).
    /// LMDB opens `lock.mdb` for writing even to read (its reader table), and `data.mdb` for
    /// writing unless read-only; either may have to be created in the folder.
    package static func refusedFile(folder: String, readOnly: Bool) -> String? {
        for (name, flags, why) in [("lock.mdb", O_RDWR, " (LMDB records its readers there, even to read)"),
                                   ("data.mdb", readOnly ? O_RDONLY : O_RDWR, "")] {
            let file = folder + "/" + name
            // The error's own words say why (permission denied, not permitted): named once.
            if access(file, F_OK) != 0 {
                // Missing: LMDB creates it (not data.mdb on a read-only open, which LMDB reports itself).
                guard errno == ENOENT else { return "cannot reach '\(file)'\(why)" }
                if name == "data.mdb" && readOnly { continue }
                if access(folder, W_OK | X_OK) != 0 { return "cannot create '\(file)'\(why)" }
                continue
            }
            let fd = open(file, flags | O_NONBLOCK)
            if fd < 0 { return "cannot open '\(file)' for \(flags == O_RDONLY ? "reading" : "writing")\(why)" }
            close(fd)
        }
        return nil
    }

    /// The meta page LMDB uses in `folder/data.mdb` (the one of the higher transaction ID, the
    /// first on a tie), read without LMDB; nil when the file cannot be read or is not sound.
    package static func currentMeta(folder: String) -> Meta? {
        let file = folder + "/data.mdb"
        let fd = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        if fd < 0 { return nil }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG,
              let metas = try? validate(fd: fd, fileSize: UInt64(st.st_size), file: file), metas.count == 2 else { return nil }
        return metas[1].transactionID > metas[0].transactionID ? metas[1] : metas[0]
    }

    /// The ID of the last committed transaction of `folder/data.mdb` (``currentMeta(folder:)``).
    /// Lets a reader that LMDB cannot register (``Environment/registersReaders``) tell whether
    /// the store was written while it read.
    package static func lastTransactionID(folder: String) -> UInt64? {
        currentMeta(folder: folder)?.transactionID
    }

    /// Refuses a `data.mdb` or `lock.mdb` in `folder` that exists but is not a regular file (a
    /// FIFO would block the open forever; a directory or device is no LMDB file either), with
    /// ``LMDBError/invalid`` naming the file, as is a symbolic link to a missing file (LMDB would
    /// create the link's target). Missing files are fine: LMDB creates them.
    package static func checkFileKinds(folder: String) throws(LMDBError) {
        for name in ["data.mdb", "lock.mdb"] {
            let file = folder + "/" + name
            var st = stat()
            guard stat(file, &st) == 0 else {
                // A symbolic link to nothing: LMDB would create its target, wherever that is.
                var link = stat()
                if errno == ENOENT, lstat(file, &link) == 0, link.st_mode & S_IFMT == S_IFLNK {
                    throw LMDBError(code: LMDBError.invalid.code, operation: "open environment",
                                    detail: "'\(file)' is a symbolic link to a file that does not exist; restore the file or remove the link")
                }
                continue // missing: LMDB creates it, or reports its own error
            }
            if st.st_mode & S_IFMT != S_IFREG { throw notRegular(file, st.st_mode) }
        }
    }

    static func notRegular(_ file: String, _ mode: mode_t) -> LMDBError {
        let kind: String
        switch mode & S_IFMT {
        case S_IFDIR: kind = "a directory"
        case S_IFIFO: kind = "a FIFO"
        case S_IFSOCK: kind = "a socket"
        case S_IFCHR: kind = "a character device"
        case S_IFBLK: kind = "a block device"
        default: kind = "a special file"
        }
        return LMDBError(code: LMDBError.invalid.code, operation: "open environment", detail: "'\(file)' is \(kind), not a regular file")
    }

    static func emptyFile(_ file: String) -> LMDBError {
        LMDBError(code: LMDBError.invalid.code, operation: "open environment",
                  detail: "'\(file)' is empty (0 bytes): no data, not an LMDB environment")
    }

    /// Reads both meta pages of an open `data.mdb`, checks them (the current one against the
    /// file too) and returns them.
    package static func validate(fd: Int32, fileSize: UInt64, file: String) throws(LMDBError) -> [Meta] {
        func bad(_ code: LMDBError, _ why: String) -> LMDBError {
            LMDBError(code: code.code, operation: "validate data file", detail: "'\(file)': \(why)")
        }
        if fileSize < 2 * 512 { throw bad(.invalid, "file of \(fileSize) bytes is too small to hold two meta pages") }
        var first = [UInt8](repeating: 0, count: 512)
        guard pread(fd, &first, 512, 0) == 512 else { throw bad(.corrupted, "cannot read the first meta page") }
        let meta0 = try parse(first, pageNumber: 0, bad: bad)
        let pageSize = UInt64(meta0.pageSize)
        if fileSize < 2 * pageSize { throw bad(.corrupted, "file of \(fileSize) bytes is shorter than two pages of \(pageSize)") }
        var second = [UInt8](repeating: 0, count: 512)
        guard pread(fd, &second, 512, off_t(pageSize)) == 512 else { throw bad(.corrupted, "cannot read the second meta page") }
        let meta1 = try parse(second, pageNumber: 1, bad: bad)
        if meta1.pageSize != meta0.pageSize { throw bad(.corrupted, "the two meta pages disagree on the page size") }
        let pages = fileSize / pageSize
        // LMDB opens with the meta page of the higher transaction ID (the first on a tie), then
        // reads page `transaction ID % 2` for every transaction; in a sound file both are the same
        // page. The other one is never read, and the next commit overwrites it. When writing a meta
        // page fails, LMDB writes part of it back with the old transaction ID "to prevent it from
        // being used": that page can then name roots past its own last page. It is harmless, so
        // only the pages LMDB reads are checked against the file (both must still be meta pages
        // of one page size).
        let metas = [meta0, meta1]
        let picked = meta1.transactionID > meta0.transactionID ? 1 : 0
        let read: Set<Int> = [picked, Int(metas[picked].transactionID & 1)]
        for (index, meta) in metas.enumerated() where read.contains(index) {
            if meta.lastPage < 1 { throw bad(.corrupted, "meta page \(index): last page \(meta.lastPage) is below 1") }
            if meta.lastPage >= pages {
                throw bad(.corrupted, "meta page \(index): last page \(meta.lastPage) lies beyond the file's \(pages) pages")
            }
            for root in [meta.roots.free, meta.roots.main] where root != invalidPage {
                if root < 2 || root > meta.lastPage {
                    throw bad(.corrupted, "meta page \(index): database root page \(root) lies outside pages 2...\(meta.lastPage)")
                }
            }
        }
        return [meta0, meta1]
    }

    private static func parse(_ page: [UInt8], pageNumber: UInt64, bad: (LMDBError, String) -> LMDBError) throws(LMDBError) -> Meta {
        func u16(_ o: Int) -> UInt16 { UInt16(page[o]) | UInt16(page[o + 1]) << 8 }
        func u32(_ o: Int) -> UInt32 { (0..<4).reduce(0) { $0 | UInt32(page[o + $1]) << (8 * $1) } }
        func u64(_ o: Int) -> UInt64 { (0..<8).reduce(0) { $0 | UInt64(page[o + $1]) << (8 * $1) } }
        // Page header (16 bytes): pgno u64, pad u16, flags u16, lower u16, upper u16.
        let header = 16
        let magicValue = u32(header)
        if magicValue != magic {
            throw bad(.invalid, "meta page \(pageNumber) has no LMDB magic number (not an LMDB file, or damaged)")
        }
        let version = u32(header + 4)
        if version != dataVersion { throw bad(.versionMismatch, "meta page \(pageNumber) has data version \(version), expected \(dataVersion)") }
        if u64(0) != pageNumber { throw bad(.corrupted, "meta page \(pageNumber) says it is page \(u64(0))") }
        if u16(10) & 0x08 == 0 { throw bad(.corrupted, "meta page \(pageNumber) is not flagged as a meta page") }
        // MDB_meta: magic u32, version u32, address ptr, mapsize u64, dbs[2] (48 bytes each), last_pg u64, txnid u64.
        let mapSize = u64(header + 16)
        let dbs = header + 24
        let pageSize = u32(dbs) // mm_dbs[FREE_DBI].md_pad holds the page size
        if pageSize < 512 || pageSize > 65536 || pageSize & (pageSize - 1) != 0 {
            throw bad(.corrupted, "meta page \(pageNumber) has page size \(pageSize), not a power of two from 512 to 65536")
        }
        let freeRoot = u64(dbs + 40)
        let mainRoot = u64(dbs + 48 + 40)
        let lastPage = u64(dbs + 96)
        let txnID = u64(dbs + 104)
        return Meta(pageSize: pageSize, mapSize: mapSize, lastPage: lastPage, transactionID: txnID,
                    roots: (freeRoot, mainRoot))
    }
}
