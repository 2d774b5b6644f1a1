import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An ordered in-memory storage driver, for tests and previews: transactions with rollback,
/// savepoints and snapshot reads, nothing on disk (the data goes with the object).
///
/// Writers are serialized (one at a time; a write inside a write on the same thread is an
/// error); readers see the last committed state.
public final class InMemoryDriver: StorageDriver, @unchecked Sendable {
    // @unchecked Sendable: `committed` is guarded by `lock`; `writer` serializes write transactions.
    struct Space: Equatable {
        var multiValue: Bool
        var keys: [[UInt8]] = []
        var values: [[[UInt8]]] = []

        func index(of key: UnsafeRawBufferPointer) -> (Int, found: Bool) {
            var low = 0, high = keys.count
            while low < high {
                let mid = (low + high) / 2
                if keys[mid].lexicographicallyPrecedes(key) { low = mid + 1 } else { high = mid }
            }
            return (low, low < keys.count && keys[low].elementsEqual(key))
        }
    }

    struct State: Equatable {
        var spaces: [String: Space] = [:]
    }

    /// Called with the state before and after a write, before it is published (writers are
    /// serialized, so `before` is the committed state); throwing aborts the commit.
    typealias CommitHook = @Sendable (_ before: State, _ after: State) throws -> Void

    private let lock = NSLock()
    private var committed = State()
    private let writer = NSCondition()
    private var writerThread: pthread_t?
    private let commitHook: CommitHook?
    /// A name for messages.
    public let name: String

    /// An empty in-memory store.
    public init(name: String = "memory") {
        self.name = name
        self.commitHook = nil
    }

    /// A store starting from `state`, whose commits pass through `commitHook` first (the
    /// simple-backend adapter writes them through).
    init(name: String, state: State, commitHook: @escaping CommitHook) {
        self.name = name
        self.committed = state
        self.commitHook = commitHook
    }

    /// Replaces the committed state (the simple-backend adapter, after a failed write-through,
    /// from inside its commit hook).
    func replaceCommitted(_ state: State) { lock.withLock { committed = state } }

    public var capabilities: StorageCapabilities { [.transactions, .savepoints, .snapshots] }
    public var location: String { "memory:\(name)" }

    public func read<R>(_ body: (any StorageTransaction) throws -> R) throws -> R {
        let snapshot = lock.withLock { committed }
        let txn = InMemoryTransaction(state: snapshot, readOnly: true)
        defer {
            txn.finished = true
            txn.attachment = nil
        }
        return try body(txn)
    }

    public func write<R>(_ body: (any StorageTransaction) throws -> R) throws -> R {
        let me = pthread_self()
        writer.lock()
        if let owner = writerThread, pthread_equal(owner, me) != 0 {
            writer.unlock()
            throw DepotError.transactionMisuse("a write inside a write on the same thread: use a savepoint")
        }
        while writerThread != nil { writer.wait() }
        writerThread = me
        writer.unlock()
        defer {
            writer.lock()
            writerThread = nil
            writer.signal()
            writer.unlock()
        }
        let before = lock.withLock { committed }
        let txn = InMemoryTransaction(state: before, readOnly: false)
        defer {
            txn.attachment = nil // the document layer's state points back at the transaction
            txn.handlers.removeAll()
        }
        let result = try body(txn)
        txn.finished = true
        try commitHook?(before, txn.state)
        lock.withLock { committed = txn.state }
        for handler in txn.handlers { handler() }
        return result
    }
}

/// A transaction of ``InMemoryDriver``: a private copy of the state, published at commit.
final class InMemoryTransaction: StorageTransaction {
    var state: InMemoryDriver.State
    let isReadOnly: Bool
    var finished = false
    var handlers: [() -> Void] = []
    private var savepoints: [InMemoryDriver.State] = []
    var attachment: AnyObject?

    init(state: InMemoryDriver.State, readOnly: Bool) {
        self.state = state
        self.isReadOnly = readOnly
    }

    var nestingDepth: Int { savepoints.count }

    func afterCommit(_ handler: @escaping () -> Void) { handlers.append(handler) }

    private func check(write: Bool) throws {
        if finished { throw DepotError.transactionMisuse("the in-memory transaction has ended") }
        if write && isReadOnly { throw DepotError(code: .readOnlyTransaction, message: "a read-only transaction cannot write") }
    }

    func keyspace(named name: String, create: Bool, multiValue: Bool) throws -> Keyspace? {
        try check(write: false)
        if state.spaces[name] == nil {
            guard create else { return nil }
            try check(write: true)
            state.spaces[name] = InMemoryDriver.Space(multiValue: multiValue)
        }
        return Keyspace(name: name, handle: 0)
    }

    private func space(_ keyspace: Keyspace) throws -> InMemoryDriver.Space {
        guard let space = state.spaces[keyspace.name] else { throw DepotError.storageInconsistent("keyspace '\(keyspace.name)' was dropped") }
        return space
    }

    func withValue<R>(forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        try check(write: false)
        let space = try space(keyspace)
        let (i, found) = space.index(of: key)
        guard found, let first = space.values[i].first else { return nil }
        return try first.withUnsafeBytes { try body($0) }
    }

    func put(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace) throws {
        try check(write: true)
        guard var space = state.spaces.removeValue(forKey: keyspace.name) else { throw DepotError.storageInconsistent("keyspace '\(keyspace.name)' was dropped") }
        defer { state.spaces[keyspace.name] = space }
        let (i, found) = space.index(of: key)
        let bytes = [UInt8](value)
        if !found {
            space.keys.insert([UInt8](key), at: i)
            space.values.insert([bytes], at: i)
        } else if space.multiValue {
            var values = space.values[i]
            var low = 0, high = values.count
            while low < high {
                let mid = (low + high) / 2
                if values[mid].lexicographicallyPrecedes(bytes) { low = mid + 1 } else { high = mid }
            }
            if low == values.count || values[low] != bytes { values.insert(bytes, at: low) }
            space.values[i] = values
        } else {
            space.values[i] = [bytes]
        }
    }

    func delete(forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace) throws -> Bool {
        try check(write: true)
        guard var space = state.spaces.removeValue(forKey: keyspace.name) else { throw DepotError.storageInconsistent("keyspace '\(keyspace.name)' was dropped") }
        defer { state.spaces[keyspace.name] = space }
        let (i, found) = space.index(of: key)
        guard found else { return false }
        space.keys.remove(at: i)
        space.values.remove(at: i)
        return true
    }

    func delete(forKey key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, in keyspace: Keyspace) throws -> Bool {
        try check(write: true)
        guard var space = state.spaces.removeValue(forKey: keyspace.name) else { throw DepotError.storageInconsistent("keyspace '\(keyspace.name)' was dropped") }
        defer { state.spaces[keyspace.name] = space }
        let (i, found) = space.index(of: key)
        guard found, let j = space.values[i].firstIndex(where: { $0.elementsEqual(value) }) else { return false }
        space.values[i].remove(at: j)
        if space.values[i].isEmpty {
            space.keys.remove(at: i)
            space.values.remove(at: i)
        }
        return true
    }

    func scan(_ keyspace: Keyspace, lower: [UInt8]?, upper: [UInt8]?, prefix: [UInt8]?, reverse: Bool,
              _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        try check(write: false)
        let space = try space(keyspace)
        func inRange(_ key: [UInt8]) -> Bool {
            if let lower, key.lexicographicallyPrecedes(lower) { return false }
            if let upper, !key.lexicographicallyPrecedes(upper) { return false }
            if let prefix, !key.starts(with: prefix) { return false }
            return true
        }
        let indices = reverse ? Array(space.keys.indices.reversed()) : Array(space.keys.indices)
        for i in indices where inRange(space.keys[i]) {
            let values = reverse ? space.values[i].reversed() : space.values[i]
            for value in values {
                let goOn = try space.keys[i].withUnsafeBytes { k in try value.withUnsafeBytes { v in try body(k, v) } }
                if !goOn { return }
            }
        }
    }

    func count(_ keyspace: Keyspace) throws -> Int {
        try check(write: false)
        return try space(keyspace).values.reduce(0) { $0 + $1.count }
    }

    func clear(_ keyspace: Keyspace) throws {
        try check(write: true)
        let multi = try space(keyspace).multiValue
        state.spaces[keyspace.name] = InMemoryDriver.Space(multiValue: multi)
    }

    func drop(_ keyspace: Keyspace) throws {
        try check(write: true)
        state.spaces[keyspace.name] = nil
    }

    func savepoint<R>(_ body: () throws -> R) throws -> R {
        try check(write: true)
        savepoints.append(state)
        do {
            let result = try body()
            savepoints.removeLast()
            return result
        } catch {
            state = savepoints.removeLast()
            throw error
        }
    }
}
