#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension LMDBError {
    /// Free bytes below which an `EIO` from a write is taken for a full disk.
    ///
    /// LMDB reports a *short* write (`write(2)` took only part of the pages, which is what a full
    /// file system does) as `EIO`, so a full disk would read as an I/O error. After a short write
    /// the file system has taken all it could, so its free space is close to nothing.
    package static let fullDiskThreshold: UInt64 = 1 << 20

    /// The code a failed write should be reported with: `ENOSPC` for `EIO` when the file
    /// system has less than ``fullDiskThreshold`` bytes free (`freeBytes`, nil when unknown),
    /// otherwise `code` unchanged.
    package static func classifyWriteFailure(code: Int32, freeBytes: UInt64?) -> Int32 {
        if code == EIO, let freeBytes, freeBytes < fullDiskThreshold { return ENOSPC }
        return code
    }

    /// Bytes available to this user on the file system holding `folder` (`statvfs`; of its
    /// nearest existing ancestor when it is gone, as after a failed copy removed it), or nil.
    package static func freeBytes(inFolder folder: String) -> UInt64? {
        var info = statvfs()
        var path = folder
        while statvfs(path, &info) != 0 {
            guard errno == ENOENT, path != "/", path != "." else { return nil }
            if let slash = path.lastIndex(of: "/") {
                path = slash == path.startIndex ? "/" : String(path[..<slash])
            } else {
                path = "."
            }
        }
        return UInt64(info.f_bavail) &* UInt64(info.f_frsize)
    }

    /// The error for a failed write (commit, put, sync, copy) in `folder`: `EIO` on a full disk
    /// becomes ``noSpace``, and a full disk is said so in the message.
    /// `outcome` says what became of the write (a commit's by default).
    static func writeFailure(code: Int32, operation: String, database: String?, folder: String,
                             outcome: String = "the transaction was not committed: free some space and write again") -> LMDBError {
        guard code == EIO || code == ENOSPC else { return LMDBError(code: code, operation: operation, database: database) }
        let free = freeBytes(inFolder: folder)
        let mapped = classifyWriteFailure(code: code, freeBytes: free)
        guard mapped == ENOSPC else { return LMDBError(code: code, operation: operation, database: database) }
        // ENOSPC with room to spare: a quota, a file-size limit or a full inode table.
        if let free, free >= fullDiskThreshold {
            return LMDBError(code: ENOSPC, operation: operation, database: database,
                             detail: "the file system holding '\(folder)' refused the write as full although \(free) bytes are free (a quota, a file-size limit or its inode table); \(outcome)")
        }
        let amount = free.map { "\($0) bytes free" } ?? "free space unknown"
        return LMDBError(code: ENOSPC, operation: operation, database: database,
                         detail: "the disk holding '\(folder)' is full (\(amount)); \(outcome)")
    }
}
