#if Postgres
import DepotCore

/// The document layer hands the driver's errors to its callers wrapped (`DepotError` code
/// `storage`, the driver's error as `underlyingError`).
extension PostgresDriverError: StorageDriverError {}

extension PostgresDriverError {
    /// `error` when it is the driver's, or the driver's error that a `DepotError` wraps: the
    /// driver's retry and fail-over decisions read it however the caller's closure passed it on.
    static func unwrapping(_ error: any Error) -> PostgresDriverError? {
        if let error = error as? PostgresDriverError { return error }
        return (error as? DepotError)?.underlyingError as? PostgresDriverError
    }
}

/// Runs one operation of ``PostgresTransaction``'s storage surface, handing its
/// ``PostgresDriverError`` on as a `DepotError` with code `storage` (as the LMDB driver does), so
/// that code inside a transaction closure catches `DepotError` only; other errors pass as they
/// are. The transaction remembered what retries need (``PostgresTransaction/run(_:)``) before.
@inline(__always)
func storageCall<R>(_ body: () throws -> R) throws -> R {
    do {
        return try body()
    } catch let error as PostgresDriverError {
        throw DepotError.storage(error)
    }
}
#endif
