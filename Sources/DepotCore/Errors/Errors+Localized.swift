import Foundation

// `localizedDescription` of Depot's other error types shows their message, as ``DepotError``'s
// does, not "The operation could not be completed".

extension SeedError: LocalizedError {
    /// The ``description``: the file, the JSON path and what is wrong.
    public var errorDescription: String? { description }
}

extension BinaryCodecError: LocalizedError {
    /// The ``description``.
    public var errorDescription: String? { description }
}

extension SimpleBackendError: LocalizedError {
    /// The ``description``.
    public var errorDescription: String? { description }
}
