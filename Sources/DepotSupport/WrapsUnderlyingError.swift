/// An error of one layer made from the error of the layer below it (Depot's `DepotError` with code
/// `storage` carries the storage driver's). A lower layer's own patterns look through it: with
/// LMDB, `catch LMDBError.mapFull` matches a `DepotError` that wraps `MDB_MAP_FULL`.
public protocol WrapsUnderlyingError: Error {
    /// The lower layer's error this one was made from, if any.
    var underlyingError: (any Error)? { get }
}
