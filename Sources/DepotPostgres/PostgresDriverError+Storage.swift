#if Postgres
import DepotCore

/// The document layer hands the driver's errors to its callers wrapped (`DepotError` code
/// `storage`, the driver's error as `underlyingError`).
extension PostgresDriverError: StorageDriverError {}
#endif
