import CDepotAtomic

/// A value that every thread reads without a lock and that changes rarely.
///
/// Each change publishes an immutable copy with an atomic pointer store; a reader loads the
/// pointer and reads the copy in place (no lock, no reference count touched, so readers on
/// many cores share only a cache line that nobody writes). Copies are kept until this object
/// goes away, since a reader may still be looking at an older one: publish only on real changes
/// (the owners here publish when a collection, schema version or transform first appears).
///
/// `@usableFromInline package` with an inlinable ``read(_:)``: DepotCore reads the engine's
/// published state on every read transaction, and a `package` member of a type that is not
/// `@usableFromInline` is not inlined into another module (a call per read, +2.5% per read
/// transaction when this type first moved here without it).
///
/// `@unchecked Sendable`: the pointer is accessed atomically; `copies` is written only by
/// ``publish(_:)``, whose callers serialize (the owner's lock).
@usableFromInline
package final class Published<Value>: @unchecked Sendable {
    @usableFromInline
    final class Copy {
        @usableFromInline let value: Value
        init(_ value: Value) { self.value = value }
    }

    @usableFromInline let pointer = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: 1)
    private var copies: [Copy] = []

    package init(_ initial: Value) {
        pointer.initialize(to: nil)
        publish(initial)
    }

    deinit { pointer.deallocate() }

    /// Runs `body` on the current value.
    @inlinable @inline(__always)
    package func read<R>(_ body: (Value) throws -> R) rethrows -> R {
        // Never nil: `init` published a copy.
        let raw = cdepot_atomic_load_pointer(pointer).unsafelyUnwrapped
        return try Unmanaged<Copy>.fromOpaque(raw)._withUnsafeGuaranteedRef { try body($0.value) }
    }

    /// The current value.
    @inlinable
    package var value: Value { read { $0 } }

    /// Makes `value` the current value. Callers serialize (hold their lock).
    package func publish(_ value: Value) {
        let copy = Copy(value)
        copies.append(copy)
        cdepot_atomic_store_pointer(pointer, Unmanaged.passUnretained(copy).toOpaque())
    }
}
