import Foundation

/// A full ``StorageDriver`` over a ``SimpleStorageBackend`` (save, load, delete, list keys).
///
/// **How it works**: at init the driver loads every entry under its prefix into an ordered
/// in-memory copy (the same engine as ``InMemoryDriver``). Reads are served from memory; a
/// write transaction works on a private copy and, at commit, the keys it changed are written
/// through to the backend (one `save` or `delete` per changed record) before the commit is
/// published. So:
///
/// - **Transactions, savepoints, snapshot reads, ordered scans and multi-value keyspaces** are
///   Depot's, in memory: a write closure that throws changes nothing, in memory or in the backend.
/// - **Single process, single driver**: the copy is loaded once; changes made to the backend by
///   anyone else (another process, another driver on the same backend and prefix) are not seen,
///   and are overwritten key by key. Use one driver per backend and prefix.
/// - **Durability is the backend's**: a commit returns once the backend's methods returned. A
///   commit is written key by key, so a crash in the middle of one can leave part of it in the
///   backend. If the backend throws during a write-through, the commit fails with
///   ``SimpleBackendError/Kind/writeThroughFailed`` and the driver reloads its copy from the
///   backend, so that it serves what the backend really holds (which may include part of the
///   failed commit).
/// - **Memory**: everything under the prefix is held in memory; meant for small data (settings,
///   caches, a few thousand documents).
///
/// Capabilities: `transactions`, `savepoints` and `snapshots`; not `durable` nor `multiProcess`
/// (Depot cannot know what the backend promises).
public final class SimpleBackendDriver: StorageDriver {
    /// The backend.
    public let backend: any SimpleStorageBackend
    /// Every backend key the driver writes starts with this prefix; other keys are ignored.
    public let keyPrefix: String
    private let memory: InMemoryDriver

    /// Loads everything `backend` holds under `keyPrefix`.
    ///
    /// - Parameters:
    ///   - backend: where the data lives.
    ///   - keyPrefix: the start of every backend key the driver uses (so that the backend can hold
    ///     other data, as UserDefaults does); not empty.
    ///   - name: a name for messages (``location`` is `simple:<name>`).
    /// - Throws: ``SimpleBackendError`` when the backend fails or holds unreadable data under the
    ///   prefix; ``DepotError`` when the prefix is empty.
    public init(backend: any SimpleStorageBackend, keyPrefix: String = "depot.", name: String = "simple") throws {
        if keyPrefix.isEmpty { throw DepotError(code: .invalidOption, message: "the key prefix of a SimpleBackendDriver must not be empty") }
        self.backend = backend
        self.keyPrefix = keyPrefix
        let layout = SimpleBackendLayout(prefix: keyPrefix)
        let state = try layout.load(from: backend)
        // The hook reaches the memory driver through a box: it is created after the hook.
        let box = MemoryBox()
        memory = InMemoryDriver(name: name, state: state) { before, after in
            try Self.writeThrough(layout: layout, backend: backend, before: before, after: after, memory: box.driver)
        }
        box.driver = memory
    }

    /// Transactions, savepoints and snapshot reads (Depot's, in memory).
    public var capabilities: StorageCapabilities { [.transactions, .savepoints, .snapshots] }
    /// `simple:<name>`.
    public var location: String { "simple:\(memory.name)" }

    /// Runs `body` in a read transaction over the in-memory copy (a snapshot).
    public func read<R>(_ body: (any StorageTransaction) throws -> R) throws -> R { try memory.read(body) }

    /// Runs `body` in a write transaction; at commit the changed keys are written through to the
    /// backend. Writers are serialized; a write inside a write on the same thread is an error.
    public func write<R>(_ body: (any StorageTransaction) throws -> R) throws -> R { try memory.write(body) }

    private static func writeThrough(layout: SimpleBackendLayout, backend: any SimpleStorageBackend,
                                     before: InMemoryDriver.State, after: InMemoryDriver.State, memory: InMemoryDriver?) throws {
        let (saves, deletes) = layout.changes(from: before, to: after)
        var current = ""
        do {
            for (key, data) in saves {
                current = key
                try backend.save(data, forKey: key)
            }
            for key in deletes {
                current = key
                try backend.delete(forKey: key)
            }
        } catch {
            // Serve what the backend really holds from now on (when it can still be read).
            if let reloaded = try? layout.load(from: backend) { memory?.replaceCommitted(reloaded) }
            throw SimpleBackendError(kind: .writeThroughFailed, backendKey: current,
                                     detail: "the backend threw \(type(of: error)); the commit failed and the backend may hold part of it", underlying: error)
        }
    }
}

/// Lets the commit hook reach the memory driver created after it.
///
/// `@unchecked Sendable`: `driver` is set once, in the adapter's init, before any write can run.
private final class MemoryBox: @unchecked Sendable {
    weak var driver: InMemoryDriver?
}
