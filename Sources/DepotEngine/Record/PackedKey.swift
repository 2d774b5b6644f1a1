/// A record key kept by value: up to 16 bytes packed into two words (no heap allocation for
/// integer, UUID and short string IDs), longer keys with the rest on the heap. Hashing and
/// ordering never chase a pointer for short keys; the order is the keys' byte order.
@usableFromInline
package struct PackedKey: Hashable, Comparable {
    @usableFromInline var head: UInt64 = 0
    @usableFromInline var next: UInt64 = 0
    @usableFromInline var count: Int
    @usableFromInline var tail: [UInt8]?

    /// Packs `bytes`.
    @inlinable
    package init(_ bytes: UnsafeRawBufferPointer) {
        count = bytes.count
        for i in 0..<min(8, bytes.count) { head |= UInt64(bytes[i]) << UInt64(56 - 8 * i) }
        if bytes.count > 8 {
            for i in 8..<min(16, bytes.count) { next |= UInt64(bytes[i]) << UInt64(56 - 8 * (i - 8)) }
        }
        if bytes.count > 16 { tail = [UInt8](bytes[16...]) }
    }

    /// Packs `bytes`.
    @inlinable
    package init(_ bytes: [UInt8]) {
        self = bytes.withUnsafeBytes { PackedKey($0) }
    }

    /// The key's bytes.
    @usableFromInline
    package var bytes: [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(count)
        for i in 0..<min(8, count) { out.append(UInt8(truncatingIfNeeded: head >> UInt64(56 - 8 * i))) }
        if count > 8 { for i in 8..<min(16, count) { out.append(UInt8(truncatingIfNeeded: next >> UInt64(56 - 8 * (i - 8)))) } }
        if let tail { out.append(contentsOf: tail) }
        return out
    }

    /// Lends the key's bytes without allocating (for keys up to 16 bytes).
    @inlinable
    package func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        if count > 16 { return try bytes.withUnsafeBytes(body) }
        var words = (head.bigEndian, next.bigEndian)
        return try Swift.withUnsafeBytes(of: &words) { try body(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
    }

    @inlinable
    package static func < (a: PackedKey, b: PackedKey) -> Bool {
        if a.head != b.head { return a.head < b.head }
        if a.next != b.next { return a.next < b.next }
        // The first 16 bytes are equal (zero-padded): compare what follows, then the lengths.
        if a.count <= 16 || b.count <= 16 { return a.count < b.count }
        let x = a.tail ?? [], y = b.tail ?? []
        if x != y { return x.lexicographicallyPrecedes(y) }
        return a.count < b.count
    }
}
