import Foundation

// `localizedDescription` of Depot's other error types shows their message, as ``DepotError``'s
// does, not "The operation could not be completed".

extension BinaryCodecError: LocalizedError {
    /// The ``description``.
    public var errorDescription: String? { description }
}

extension SimpleBackendError: LocalizedError {
    /// The ``description``.
    public var errorDescription: String? { description }
}
