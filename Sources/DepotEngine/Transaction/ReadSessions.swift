import CDepotAtomic

/// The read views of one store handle that its threads reuse from one `read {}` to the next.
///
/// A document read transaction needs a view (DepotCore's `DocumentTransaction`) and a context
/// with what it resolved (collections, per-type facts, the schema version). Building those for
/// every request cost several times the look-up itself; a thread keeps its view here instead and
/// rebinds its context to the next read transaction, keeping what it resolved while the store's
/// schema version is unchanged (see ``TransactionContext/rebind(to:retaining:)``).
///
/// One slot per thread stripe (chosen by the same thread number as the reader gate), each on
/// its own cache line: a thread takes its view with an atomic exchange and puts it back with a
/// compare-and-swap, so threads reading at once share nothing. A view that the caller kept past
/// its closure is never put back.
///
/// Generic over the view, which belongs to the layer above; `@usableFromInline package` with
/// inlinable members, so that every read specializes them (no call, no generic metadata).
///
/// `@unchecked Sendable`: the slots are accessed with atomics only; a view is used by one thread
/// at a time (the one that took it out of its slot).
@usableFromInline
package final class ReadSessions<View: AnyObject>: @unchecked Sendable {
    @usableFromInline static var stripes: Int { 64 }
    /// Pointers per stripe: 16 × 8 bytes, one slot per 128 bytes (no false sharing).
    @usableFromInline static var stride: Int { 16 }
    @usableFromInline let slots: UnsafeMutablePointer<UnsafeMutableRawPointer?>

    /// Empty slots.
    package init() {
        slots = .allocate(capacity: Self.stripes * Self.stride)
        slots.initialize(repeating: nil, count: Self.stripes * Self.stride)
    }

    deinit {
        for index in 0..<Self.stripes {
            if let raw = slots[index * Self.stride] { Unmanaged<View>.fromOpaque(raw).release() }
        }
        slots.deallocate()
    }

    /// The calling thread's slot.
    @inlinable @inline(__always)
    package func slot() -> UnsafeMutablePointer<UnsafeMutableRawPointer?> {
        slots + (ThreadIndex.current & (Self.stripes - 1)) * Self.stride
    }

    /// Takes the view kept in `slot`, if any, with the slot's reference: the caller uses it
    /// without retaining it, then releases it (`takeRetainedValue()`) or gives it back.
    @inlinable @inline(__always)
    package func take(_ slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> Unmanaged<View>? {
        guard let raw = cdepot_atomic_exchange_pointer(slot, nil) else { return nil }
        return Unmanaged<View>.fromOpaque(raw)
    }

    /// Keeps `view` in `slot` unless another view is there already.
    @inlinable @inline(__always)
    package func give(_ view: consuming View, to slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        let raw = Unmanaged.passRetained(view).toOpaque()
        if cdepot_atomic_compare_exchange_pointer(slot, nil, raw) == 0 {
            Unmanaged<View>.fromOpaque(raw).release()
        }
    }
}
