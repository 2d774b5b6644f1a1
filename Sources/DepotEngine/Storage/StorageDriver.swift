import Foundation

/// What a storage backend can promise. The document layer states its guarantees from these.
public struct StorageCapabilities: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// A write commits atomically and rolls back entirely when its closure throws. Without it,
    /// operations apply one by one as they are called, and a closure that throws leaves what it
    /// already did (the document layer says so in its errors; change sets are still sent).
    public static let transactions = StorageCapabilities(rawValue: 1 << 0)
    /// Savepoints (child transactions) roll back alone.
    public static let savepoints = StorageCapabilities(rawValue: 1 << 1)
    /// Reads see one consistent snapshot.
    public static let snapshots = StorageCapabilities(rawValue: 1 << 2)
    /// A returned commit survives a crash or power loss.
    public static let durable = StorageCapabilities(rawValue: 1 << 3)
    /// Several processes may use the same data at once.
    public static let multiProcess = StorageCapabilities(rawValue: 1 << 4)
    /// A read is sent without waiting for the answers to the transaction's earlier statements,
    /// and they all come back in one wait (a database server across a network). The document
    /// layer then reads a document by ID (`Store.retrieve`) before it checks the schema version
    /// that what it resolved earlier holds for, and reads again in the rare case it changed: a
    /// get waits once instead of twice. Leave it out where a read costs no wait (LMDB).
    public static let pipelinedReads = StorageCapabilities(rawValue: 1 << 5)
}

/// A storage backend for ``Store``: the smallest set of operations the document layer needs —
/// read and write transactions over ordered keyspaces of bytes (see ``StorageTransaction``).
///
/// Built in: `LMDBDriver` (module `Depot`) (the default, durable and multi-process) and ``InMemoryDriver``
/// (ordered, for tests and previews). Write your own by conforming a class to this protocol and
/// a transaction type to ``StorageTransaction``.
public protocol StorageDriver: AnyObject, Sendable {
    /// What this backend promises.
    var capabilities: StorageCapabilities { get }
    /// Where the data lives, for messages (a folder, a URL, "memory").
    var location: String { get }
    /// Runs `body` in a read transaction.
    func read<R>(_ body: (any StorageTransaction) throws -> R) throws -> R
    /// ``read(_:)`` for a `body` that runs none of the app's code before its first operation
    /// (the document layer's own reads, such as `Store.retrieve`): the snapshot may then be
    /// taken at that operation, which can carry the transaction's start with it (one statement
    /// and one wait for a server, see ``StorageCapabilities/pipelinedReads``). The default is
    /// ``read(_:)``.
    func readFromFirstOperation<R>(_ body: (any StorageTransaction) throws -> R) throws -> R
    /// Runs `body` in a write transaction: committed when it returns; rolled back when it throws
    /// if the driver has ``StorageCapabilities/transactions``.
    func write<R>(_ body: (any StorageTransaction) throws -> R) throws -> R
    /// Where the document layer logs errors of background work on this driver.
    var logger: DepotLogger { get }
    /// Wake-ups for a change watcher that starts now (see ``ChangeNotices``), or nil when the
    /// driver has none (the default): the watcher then only polls. Called once per
    /// ``ExternalChangeWatcher``, which closes what it gets when it stops.
    func changeNotices() -> (any ChangeNotices)?
}

extension StorageDriver {
    /// Where the document layer logs background errors for this driver; off unless the driver
    /// says otherwise (`LMDBDriver` (module `Depot`) uses `EnvironmentOptions.logger`).
    public var logger: DepotLogger { .disabled }

    /// ``read(_:)``.
    public func readFromFirstOperation<R>(_ body: (any StorageTransaction) throws -> R) throws -> R { try read(body) }
}
