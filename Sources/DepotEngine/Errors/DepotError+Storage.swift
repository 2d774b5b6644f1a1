/// The error type of a storage driver. The document layer hands such errors to its callers as a
/// ``DepotError`` with code ``DepotError/Code/storage`` and the driver's error as its
/// ``DepotError/underlyingError``: a caller of the document layer catches `DepotError` only.
/// Conform your driver's error type (LMDB's `LMDBError` and `PostgresDriverError` do).
public protocol StorageDriverError: Error, Sendable {}

/// Errors of the storage driver, wrapped: a caller of the document layer catches ``DepotError``
/// only, with code ``Code/storage`` and the driver's error as ``underlyingError``.
extension DepotError.Code {
    /// The storage driver failed (LMDB, PostgreSQL or a driver of your own): the disk is full,
    /// the map reached its maximum, the server went away, … ``DepotError/underlyingError`` holds
    /// the driver's error; its own patterns still match (`catch LMDBError.mapFull`).
    public static let storage = DepotError.Code(rawValue: "storage")
}

extension DepotError: WrapsUnderlyingError {
    /// Matches ``Code/storage``.
    public static let storage = DepotError(pattern: .storage)

    /// The storage driver's error `error`, wrapped. The message is the driver's: drivers never
    /// put stored values in theirs.
    public static func storage(_ error: any StorageDriverError) -> DepotError {
        DepotError(code: .storage, message: "\(error)", underlying: UnderlyingError(error))
    }

    /// An error a driver call threw, as a caller of the document layer sees it: a ``DepotError``
    /// as it is, a ``StorageDriverError`` wrapped, anything else as a `storage` error naming it.
    package static func storage(wrapping error: any Error) -> DepotError {
        if let error = error as? DepotError { return error }
        if let error = error as? any StorageDriverError { return storage(error) }
        return DepotError(code: .storage, message: "\(error)")
    }

    /// The lower layer's error this one wraps (the driver's, for ``Code/storage``).
    public var underlyingError: (any Error)? { underlying?.error }
}

/// A wrapped driver error, compared and hashed by its description (errors are not `Hashable`).
package struct UnderlyingError: Hashable, Sendable {
    package let error: any StorageDriverError
    private let text: String
    package init(_ error: any StorageDriverError) {
        self.error = error
        text = String(reflecting: error)
    }
    package static func == (a: UnderlyingError, b: UnderlyingError) -> Bool { a.text == b.text }
    package func hash(into hasher: inout Hasher) { hasher.combine(text) }
}
