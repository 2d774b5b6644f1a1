import Foundation

/// A key that left a ``KeyValueStore``'s cache, and why. It never carries the value.
public struct KeyValueEviction: Sendable, Hashable, CustomStringConvertible {
    /// Why a key left the cache.
    public enum Reason: String, Sendable, Hashable {
        /// The least recently used saved value made room (``KeyValueStore/maxEntries`` or
        /// ``KeyValueStore/maxBytes``). Unsaved values are never evicted for room.
        case capacity
        /// ``KeyValueStore/clearCache()``, ``KeyValueStore/clearCache(forKey:)`` or
        /// ``KeyValueStore/removeAll()`` dropped it from memory.
        case cleared
        /// Another writer changed the key, so the saved copy in memory was stale.
        case changedElsewhere
        /// ``KeyValueStore/deletePermanently(_:)`` or ``KeyValueStore/removeAllPermanently()``
        /// removed it from memory and from disk.
        case removed
    }

    /// The key.
    public let key: String
    /// Why it left the cache.
    public let reason: Reason
    /// Whether an unsaved value (or an unsaved deletion) was discarded with it: it is then lost.
    public let discardedUnsavedChange: Bool

    /// An eviction notice.
    package init(key: String, reason: Reason, discardedUnsavedChange: Bool) {
        self.key = key
        self.reason = reason
        self.discardedUnsavedChange = discardedUnsavedChange
    }

    /// The key and the reason, for logs (no value).
    public var description: String {
        "\(key) (\(reason.rawValue)\(discardedUnsavedChange ? ", unsaved change discarded" : ""))"
    }
}

/// Delivers eviction notices of one cache to its callback and streams, outside the cache's lock.
///
/// `@unchecked Sendable`: `handler` and `continuations` are only touched with `lock` held.
final class KeyValueEvictionHub: @unchecked Sendable {
    /// How many notices a stream keeps for a slow consumer (the oldest are dropped beyond).
    static let streamBuffer = 10_000

    private let lock = NSLock()
    private var handler: (@Sendable (KeyValueEviction) -> Void)?
    private var continuations: [UInt64: AsyncStream<KeyValueEviction>.Continuation] = [:]
    private var nextID: UInt64 = 0

    var callback: (@Sendable (KeyValueEviction) -> Void)? {
        get { lock.withLock { handler } }
        set { lock.withLock { handler = newValue } }
    }

    /// Whether anybody listens (so that the cache can skip building notices).
    var isObserved: Bool { lock.withLock { handler != nil || !continuations.isEmpty } }

    func stream() -> AsyncStream<KeyValueEviction> {
        let (stream, continuation) = AsyncStream.makeStream(of: KeyValueEviction.self,
                                                            bufferingPolicy: .bufferingNewest(Self.streamBuffer))
        let id = lock.withLock { () -> UInt64 in
            nextID += 1
            continuations[nextID] = continuation
            return nextID
        }
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            _ = self.lock.withLock { self.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    func publish(_ evictions: [KeyValueEviction]) {
        if evictions.isEmpty { return }
        lock.lock()
        let handler = self.handler
        let targets = Array(continuations.values)
        lock.unlock()
        for eviction in evictions {
            handler?(eviction)
            for continuation in targets { continuation.yield(eviction) }
        }
    }

    /// Ends every stream (the cache is gone).
    func finish() {
        let targets = lock.withLock { () -> [AsyncStream<KeyValueEviction>.Continuation] in
            defer { continuations.removeAll() }
            return Array(continuations.values)
        }
        for continuation in targets { continuation.finish() }
    }
}
