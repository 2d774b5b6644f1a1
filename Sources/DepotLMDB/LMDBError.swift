import CLMDB
import DepotSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An error reported by LMDB, or by Depot's binding before LMDB was called.
///
/// Every error carries the raw LMDB or `errno` ``code``, the operation that failed and, where one
/// was involved, the name of the database. Match on the code the way GRDB matches `DatabaseError`:
///
/// ```swift
/// do {
///     try env.write { txn in try txn.put("v", forKey: "k", in: db, flags: .noOverwrite) }
/// } catch LMDBError.keyExists {
///     // the key was already there
/// }
/// ```
///
/// Two errors are equal when their codes are equal; the context (operation, database, detail)
/// only feeds the ``description``. Messages never contain stored values.
public struct LMDBError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The raw code: an `MDB_*` error code (negative) or an `errno` value (positive).
    public let code: Int32
    /// The operation that failed, such as `"mdb_put"` or `"open environment"`.
    public let operation: String?
    /// The named database involved, if any (`nil` for the main database or none).
    public let database: String?
    /// Extra detail written by Depot (never a stored value).
    public let detail: String?

    /// Creates an error from a raw code and its context.
    public init(code: Int32, operation: String? = nil, database: String? = nil, detail: String? = nil) {
        self.code = code
        self.operation = operation
        self.database = database
        self.detail = detail
    }

    /// Returns a copy of this error with the given context.
    public func with(operation: String? = nil, database: String? = nil, detail: String? = nil) -> LMDBError {
        LMDBError(code: code, operation: operation ?? self.operation,
                  database: database ?? self.database, detail: detail ?? self.detail)
    }

    /// LMDB's own description of the code (`mdb_strerror`), or Depot's for its own codes
    /// (``closed``, ``forked``).
    public var lmdbMessage: String {
        switch code {
        case LMDBError.closedCode: return "the environment is closed"
        case LMDBError.forkedCode: return "the environment belongs to another process (used after fork())"
        default: return String(cString: mdb_strerror(code))
        }
    }

    /// A readable message: the operation, the database, LMDB's message and Depot's detail.
    public var description: String {
        var parts: [String] = []
        if let operation { parts.append(operation) }
        if let database { parts.append("database '\(database)'") }
        var text = parts.isEmpty ? "" : parts.joined(separator: " on ") + ": "
        text += lmdbMessage
        if let detail { text += " (\(detail))" }
        return text
    }

    public static func == (lhs: LMDBError, rhs: LMDBError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// Lets `catch LMDBError.mapFull` and `case LMDBError.notFound` match any error with that code.
    /// Also matches an error of a layer above that wraps an `LMDBError` (Depot's `DepotError`
    /// with code `storage`).
    public static func ~= (pattern: LMDBError, value: any Error) -> Bool {
        if let error = value as? LMDBError { return error.code == pattern.code }
        if let wrapping = value as? any WrapsUnderlyingError, let error = wrapping.underlyingError as? LMDBError {
            return error.code == pattern.code
        }
        return false
    }
}

extension LMDBError {
    /// Key/data pair already exists (`MDB_KEYEXIST`).
    public static let keyExists = LMDBError(code: MDB_KEYEXIST)
    /// Key/data pair not found (`MDB_NOTFOUND`).
    public static let notFound = LMDBError(code: MDB_NOTFOUND)
    /// Requested page not found: usually corruption (`MDB_PAGE_NOTFOUND`).
    public static let pageNotFound = LMDBError(code: MDB_PAGE_NOTFOUND)
    /// Located page was wrong type: corruption (`MDB_CORRUPTED`).
    public static let corrupted = LMDBError(code: MDB_CORRUPTED)
    /// Update of meta page failed or environment had a fatal error (`MDB_PANIC`).
    public static let panic = LMDBError(code: MDB_PANIC)
    /// Environment version mismatch (`MDB_VERSION_MISMATCH`).
    public static let versionMismatch = LMDBError(code: MDB_VERSION_MISMATCH)
    /// File is not a valid LMDB file (`MDB_INVALID`).
    public static let invalid = LMDBError(code: MDB_INVALID)
    /// Environment map size reached (`MDB_MAP_FULL`).
    public static let mapFull = LMDBError(code: MDB_MAP_FULL)
    /// Environment `maxdbs` reached (`MDB_DBS_FULL`).
    public static let databasesFull = LMDBError(code: MDB_DBS_FULL)
    /// Environment `maxreaders` reached (`MDB_READERS_FULL`).
    public static let readersFull = LMDBError(code: MDB_READERS_FULL)
    /// Too many TLS keys in use (`MDB_TLS_FULL`).
    public static let tlsFull = LMDBError(code: MDB_TLS_FULL)
    /// Transaction has too many dirty pages (`MDB_TXN_FULL`).
    public static let transactionFull = LMDBError(code: MDB_TXN_FULL)
    /// Cursor stack too deep (`MDB_CURSOR_FULL`).
    public static let cursorFull = LMDBError(code: MDB_CURSOR_FULL)
    /// Page has not enough space (`MDB_PAGE_FULL`).
    public static let pageFull = LMDBError(code: MDB_PAGE_FULL)
    /// Database contents grew beyond environment map size (`MDB_MAP_RESIZED`).
    public static let mapResized = LMDBError(code: MDB_MAP_RESIZED)
    /// Operation and database incompatible, or database flags changed (`MDB_INCOMPATIBLE`).
    public static let incompatible = LMDBError(code: MDB_INCOMPATIBLE)
    /// Invalid reuse of reader locktable slot (`MDB_BAD_RSLOT`).
    public static let badReaderSlot = LMDBError(code: MDB_BAD_RSLOT)
    /// Transaction must abort, has a child, or is invalid (`MDB_BAD_TXN`).
    public static let badTransaction = LMDBError(code: MDB_BAD_TXN)
    /// Unsupported size of key/DB name/data, or wrong DUPFIXED size (`MDB_BAD_VALSIZE`).
    public static let badValueSize = LMDBError(code: MDB_BAD_VALSIZE)
    /// The specified DBI was changed unexpectedly (`MDB_BAD_DBI`).
    public static let badDatabase = LMDBError(code: MDB_BAD_DBI)

    /// Code of ``closed``: outside LMDB's range of codes (-30799…-30780) and of `errno` values.
    static let closedCode: Int32 = -30_600
    /// Code of ``forked``.
    static let forkedCode: Int32 = -30_601

    /// The environment (or the store over it) was closed with ``Environment/close()``: open the
    /// folder again to go on. Every entry point of a closed environment throws it.
    public static let closed = LMDBError(code: closedCode)
    /// The environment was opened by another process: this process is a child forked from it.
    /// LMDB forbids using an environment after `fork()`; open the folder again in the child.
    public static let forked = LMDBError(code: forkedCode)

    /// Invalid argument (`EINVAL`).
    public static let invalidArgument = LMDBError(code: EINVAL)
    /// Resource busy: the environment still has live transactions (`EBUSY`).
    public static let busy = LMDBError(code: EBUSY)
    /// Permission denied (`EACCES`).
    public static let permissionDenied = LMDBError(code: EACCES)
    /// No such file or directory (`ENOENT`).
    public static let noSuchFile = LMDBError(code: ENOENT)
    /// Out of memory (`ENOMEM`).
    public static let outOfMemory = LMDBError(code: ENOMEM)
    /// No space left on device (`ENOSPC`).
    public static let noSpace = LMDBError(code: ENOSPC)
    /// Resource temporarily unavailable, e.g. the lock file is held (`EAGAIN`).
    public static let wouldBlock = LMDBError(code: EAGAIN)
    /// Operation would deadlock: a write inside a write on the same thread (`EDEADLK`).
    public static let deadlock = LMDBError(code: EDEADLK)
}

/// Throws an ``LMDBError`` when `rc` is not `MDB_SUCCESS`.
@inlinable @inline(__always)
func check(_ rc: Int32, _ operation: @autoclosure () -> String, database: @autoclosure () -> String? = nil) throws(LMDBError) {
    if _slowPath(rc != 0) {
        throw LMDBError(code: rc, operation: operation(), database: database())
    }
}
