import Foundation

/// The easy way to add a storage backend (Cargo's shape): save, load and delete one blob under a
/// string key, and list the keys. ``SimpleBackendDriver`` turns it into a full transactional
/// ``StorageDriver``; Depot does ordering, snapshots, savepoints and multi-value keyspaces.
///
/// ```swift
/// final class DefaultsBackend: SimpleStorageBackend, @unchecked Sendable {
///     let defaults = UserDefaults.standard                   // or a dictionary, a folder…
///     func save(_ data: Data, forKey key: String) throws { defaults.set(data, forKey: key) }
///     func load(forKey key: String) throws -> Data? { defaults.data(forKey: key) }
///     func delete(forKey key: String) throws { defaults.removeObject(forKey: key) }
///     func keys() throws -> [String] { Array(defaults.dictionaryRepresentation().keys) }
/// }
/// let store = try Store(driver: SimpleBackendDriver(backend: DefaultsBackend()))
/// ```
///
/// Keys are ASCII (letters, digits and `.`), start with the driver's prefix, and can be long:
/// about twice the keyspace name plus twice the record key (at most ~1,100 characters). A backend
/// that turns keys into file names should shorten them (a hash) and keep the key inside the file.
/// The methods are called from one writer at a time, but possibly from different threads.
public protocol SimpleStorageBackend: Sendable {
    /// Stores `data` under `key`, replacing what was there.
    func save(_ data: Data, forKey key: String) throws
    /// The data under `key`, or nil when there is none.
    func load(forKey key: String) throws -> Data?
    /// Removes `key` (no error when it is absent).
    func delete(forKey key: String) throws
    /// Every key the backend holds (Depot ignores those without its prefix), in any order.
    func keys() throws -> [String]
}

/// An error of ``SimpleBackendDriver``: the backend failed, or holds data Depot cannot read.
/// Messages name backend keys and operations, never stored data.
public struct SimpleBackendError: StorageDriverError, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: String, Sendable, Hashable {
        /// Reading the backend at open (or to recover after a failed write) failed.
        case loadFailed
        /// Writing a commit through to the backend failed. The commit did not happen in Depot;
        /// the backend may hold part of it (see ``SimpleBackendDriver``).
        case writeThroughFailed
        /// A key with Depot's prefix holds data Depot cannot read.
        case corruptEntry
    }

    /// What went wrong.
    public let kind: Kind
    /// The backend key concerned (empty when none).
    public let backendKey: String
    /// What happened, without stored data (for a backend error, its type).
    public let detail: String
    /// The backend's own error, when there was one.
    public let underlying: (any Error)?

    /// An error of the adapter.
    public init(kind: Kind, backendKey: String, detail: String, underlying: (any Error)? = nil) {
        self.kind = kind
        self.backendKey = backendKey
        self.detail = detail
        self.underlying = underlying
    }

    /// The kind, the key and the detail.
    public var description: String {
        "simple storage backend: \(kind.rawValue)" + (backendKey.isEmpty ? "" : " at key '\(backendKey)'") + ": \(detail)"
    }
}
