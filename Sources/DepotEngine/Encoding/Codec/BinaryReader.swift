import Foundation

/// A stored key inside an object entry.
@usableFromInline
package enum StoredKey {
    case string(start: Int, count: Int)
    case int(Int64)
}

/// Bounds-checked reads over an `UnsafeRawBufferPointer`. Every read validates against `count`
/// before touching memory, so any byte sequence yields values or thrown `BinaryCodecError`s.
/// The small reads are `@inlinable`: DepotCore walks stored documents with them to build index
/// keys (`IndexFieldPath`), and a call across the module boundary per tag, key and length cost
/// indexed inserts about 2% of their instructions.
@usableFromInline
package struct BinaryReader {
    @usableFromInline package let base: UnsafeRawPointer
    @usableFromInline let count: Int

    @inlinable
    package init(_ buffer: UnsafeRawBufferPointer) {
        if let b = buffer.baseAddress {
            base = b
            count = buffer.count
        } else {
            base = UnsafeRawPointer(bitPattern: 0x10)!  // never dereferenced: count == 0
            count = 0
        }
    }

    @inlinable @inline(__always)
    func byte(_ p: Int) -> UInt8 { base.load(fromByteOffset: p, as: UInt8.self) }

    @inlinable @inline(__always)
    package func tag(at p: Int) throws -> UInt8 {
        guard UInt(bitPattern: p) < UInt(bitPattern: count) else { throw BinaryCodecError.truncated(offset: p) }
        return byte(p)
    }

    @inlinable @inline(__always)
    package func varint(_ p: inout Int) throws -> UInt64 {
        guard UInt(bitPattern: p) < UInt(bitPattern: count) else { throw BinaryCodecError.truncated(offset: p) }
        let b0 = byte(p)
        if b0 < 0x80 {
            p += 1
            return UInt64(b0)
        }
        // Two bytes (values of 128 to 16,383: zig-zagged integers from 64 on) are common too.
        if p < count &- 1 {
            let b1 = byte(p &+ 1)
            if b1 < 0x80 {
                p += 2
                return UInt64(b0 & 0x7F) | UInt64(b1) << 7
            }
        }
        return try varintSlow(&p)
    }

    @usableFromInline
    func varintSlow(_ p: inout Int) throws -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        var q = p
        while true {
            guard q < count else { throw BinaryCodecError.truncated(offset: q) }
            let b = byte(q)
            q += 1
            if shift == 63 && b > 1 { throw BinaryCodecError.malformed(offset: p, reason: "varint overflows 64 bits") }
            result |= UInt64(b & 0x7F) << shift
            if b < 0x80 {
                p = q
                return result
            }
            shift += 7
            if shift > 63 { throw BinaryCodecError.malformed(offset: p, reason: "varint too long") }
        }
    }

    /// Reads a varint length and checks that that many bytes remain.
    @inlinable @inline(__always)
    package func length(_ p: inout Int) throws -> Int {
        let n = try varint(&p)
        guard n <= UInt64(count - p) else { throw BinaryCodecError.malformed(offset: p, reason: "length \(n) exceeds remaining input") }
        return Int(n)
    }

    @inlinable @inline(__always)
    func need(_ p: Int, _ n: Int) throws {
        guard p <= count - n else { throw BinaryCodecError.truncated(offset: p) }
    }

    @inlinable @inline(__always)
    package func fixed64(_ p: inout Int) throws -> UInt64 {
        try need(p, 8)
        let v = base.loadUnaligned(fromByteOffset: p, as: UInt64.self)
        p += 8
        return UInt64(littleEndian: v)
    }

    @inline(__always)
    func fixed32(_ p: inout Int) throws -> UInt32 {
        try need(p, 4)
        let v = base.loadUnaligned(fromByteOffset: p, as: UInt32.self)
        p += 4
        return UInt32(littleEndian: v)
    }

    func uuidPayload(_ p: inout Int) throws -> UUID {
        try need(p, 16)
        let u = base.loadUnaligned(fromByteOffset: p, as: uuid_t.self)
        p += 16
        return UUID(uuid: u)
    }

    /// Makes a validated String from `n` bytes at `p` (bounds already checked).
    @inline(__always)
    package func makeString(_ p: Int, _ n: Int) throws -> String {
        if Self.isASCII(base + p, n) { return Self.asciiString(base + p, n) }
        let buf = UnsafeBufferPointer(start: (base + p).assumingMemoryBound(to: UInt8.self), count: n)
        var s = String(decoding: buf, as: UTF8.self)
        // String(decoding:) repairs invalid UTF-8; a repaired string differs from the input bytes.
        let valid = s.withUTF8 { u in u.count == n && (n == 0 || memcmp(u.baseAddress!, buf.baseAddress!, n) == 0) }
        guard valid else { throw BinaryCodecError.malformed(offset: p, reason: "invalid UTF-8") }
        return s
    }

    /// A string of `n` bytes at `bytes` known to be ASCII, copied straight into the string's
    /// storage: a short (inline) string is built in place without the standard library's byte
    /// loop; a longer one is copied from a `UTF8Span` marked as already checked ASCII, so that
    /// the standard library does not validate it again (about 110 instructions fewer per string).
    ///
    /// A string of at most 15 bytes is built as the standard library's small string, from its
    /// two words (``smallASCIIString(_:_:)``), where that layout was found to hold.
    @inlinable @inline(__always)
    static func asciiString(_ bytes: UnsafeRawPointer, _ n: Int) -> String {
        #if _pointerBitWidth(_64) && _endian(little)
        if n <= 15 { return depotSmallASCIIString(bytes, n) }
        #endif
        if n > 15, #available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *) {
            let buffer = UnsafeBufferPointer(start: bytes.assumingMemoryBound(to: UInt8.self), count: n)
            return String(copying: UTF8Span(unchecked: buffer.span, isKnownASCII: true))
        }
        return String(unsafeUninitializedCapacity: n) { target in
            if let start = target.baseAddress { UnsafeMutableRawPointer(start).copyMemory(from: bytes, byteCount: n) }
            return n
        }
    }

    #if _pointerBitWidth(_64) && _endian(little)
    /// The two words of the small string holding the `n` (0...15) ASCII bytes at `bytes`: the
    /// bytes in order from the first word's low byte on, and in the second word's top byte the
    /// discriminator of a small ASCII string (immortal, small, ASCII: 0xE0) with the count.
    /// Reads only the `n` bytes (overlapping word loads, no byte loop).
    @inlinable @inline(__always)
    package static func smallASCIIBits(_ bytes: UnsafeRawPointer, _ n: Int) -> (UInt64, UInt64) {
        var low: UInt64 = 0, high: UInt64 = 0
        if n >= 8 {
            low = bytes.loadUnaligned(as: UInt64.self)
            if n > 8 { high = bytes.loadUnaligned(fromByteOffset: n &- 8, as: UInt64.self) &>> UInt64((16 &- n) &* 8) }
        } else if n >= 4 {
            low = UInt64(bytes.loadUnaligned(as: UInt32.self))
                | UInt64(bytes.loadUnaligned(fromByteOffset: n &- 4, as: UInt32.self)) &<< UInt64((n &- 4) &* 8)
        } else if n >= 2 {
            low = UInt64(bytes.loadUnaligned(as: UInt16.self))
                | UInt64(bytes.loadUnaligned(fromByteOffset: n &- 2, as: UInt16.self)) &<< UInt64((n &- 2) &* 8)
        } else if n == 1 {
            low = UInt64(bytes.load(as: UInt8.self))
        }
        return (low, high | UInt64(0xE0 | n) &<< 56)
    }
    #endif

    /// Whether the standard library of this process lays small ASCII strings out as
    /// ``smallASCIIBits(_:_:)`` builds them: checked once, against strings of every length from
    /// 0 to 15 that the standard library builds itself (false on other platforms: strings are
    /// then built through the standard library).
    @usableFromInline
    package static let smallStringLayoutHolds: Bool = {
        #if _pointerBitWidth(_64) && _endian(little)
        guard MemoryLayout<String>.size == 16 else { return false }
        let sample = Array("Person 12345678".utf8) // 15 bytes
        return sample.withUnsafeBytes { raw -> Bool in
            guard let start = raw.baseAddress else { return false }
            for n in 0...15 {
                let made = String(decoding: raw[0..<n], as: UTF8.self)
                let bits = unsafeBitCast(made, to: (UInt64, UInt64).self)
                let ours = smallASCIIBits(start, n)
                guard bits.0 == ours.0 && bits.1 == ours.1 else { return false }
            }
            return true
        }
        #else
        return false
        #endif
    }()

    /// Whether the `n` bytes at `a` and at `b` (both readable) are equal: word compares (of 8,
    /// 4 or 2 bytes), the last one overlapping the one before, no call to `memcmp` for these
    /// short runs.
    @inlinable @inline(__always)
    package static func bytesEqual(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ n: Int) -> Bool {
        if n >= 8 {
            var i = 0
            while i + 8 <= n {
                if a.loadUnaligned(fromByteOffset: i, as: UInt64.self) != b.loadUnaligned(fromByteOffset: i, as: UInt64.self) { return false }
                i += 8
            }
            return a.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self) == b.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
        }
        if n >= 4 {
            return a.loadUnaligned(as: UInt32.self) == b.loadUnaligned(as: UInt32.self)
                && a.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self) == b.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self)
        }
        if n >= 2 {
            return a.loadUnaligned(as: UInt16.self) == b.loadUnaligned(as: UInt16.self)
                && a.loadUnaligned(fromByteOffset: n - 2, as: UInt16.self) == b.loadUnaligned(fromByteOffset: n - 2, as: UInt16.self)
        }
        return n == 0 || a.load(as: UInt8.self) == b.load(as: UInt8.self)
    }

    /// Whether the `n` bytes at `bytes` (readable) are all ASCII: word loads, the last one
    /// overlapping the one before instead of a loop over the tail bytes.
    @inlinable @inline(__always)
    package static func isASCII(_ bytes: UnsafeRawPointer, _ n: Int) -> Bool {
        var acc: UInt64 = 0
        if n >= 8 {
            var i = 0
            while i + 8 <= n {
                acc |= bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                i += 8
            }
            acc |= bytes.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
        } else if n >= 4 {
            acc = UInt64(bytes.loadUnaligned(as: UInt32.self) | bytes.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self))
        } else {
            for i in 0..<n { acc |= UInt64(bytes.load(fromByteOffset: i, as: UInt8.self)) }
        }
        return acc & 0x8080_8080_8080_8080 == 0
    }

    /// Varint length + UTF-8 (after the tag).
    @inline(__always)
    func stringPayload(_ p: inout Int) throws -> String {
        let n = try length(&p)
        let s = try makeString(p, n)
        p += n
        return s
    }

    /// Reads `count` and byte length of a container (after the tag); returns the element count and end offset.
    @inlinable @inline(__always)
    package func containerHeader(_ p: inout Int, minEntrySize: Int) throws -> (count: Int, end: Int) {
        let n = try varint(&p)
        let len = try length(&p)
        guard n <= UInt64(len / minEntrySize) else {
            throw BinaryCodecError.malformed(offset: p, reason: "element count \(n) impossible for \(len) bytes")
        }
        return (Int(n), p + len)
    }

    @inlinable @inline(__always)
    package func key(_ p: inout Int) throws -> StoredKey {
        let h = try varint(&p)
        if h & 1 == 0 {
            let n = h >> 1
            guard n <= UInt64(count - p) else { throw BinaryCodecError.malformed(offset: p, reason: "key length exceeds input") }
            let s = p
            p += Int(n)
            return .string(start: s, count: Int(n))
        }
        guard h == 1 else { throw BinaryCodecError.malformed(offset: p, reason: "invalid key header") }
        return .int(BinaryWriter.unzigzag(try varint(&p)))
    }

    package func keyString(_ p: inout Int) throws -> String {
        switch try key(&p) {
        case .string(let s, let n): return try makeString(s, n)
        case .int(let v): return String(v)
        }
    }

    /// ``skipValue(at:)`` with the commonest values — an integer of one or two varint bytes, a
    /// string of fewer than 128 bytes, an object or array of fewer than 128 entries and 128
    /// bytes — skipped inline.
    @inlinable @inline(__always)
    package func skipValueInline(at p: Int) throws -> Int {
        if p >= 0 && p < count &- 1 {
            let t = byte(p), b = byte(p &+ 1)
            if t == BinaryTag.int {
                if b < 0x80 { return p &+ 2 }
                if p < count &- 2 && byte(p &+ 2) < 0x80 { return p &+ 3 }
            } else if b < 0x80 {
                if t == BinaryTag.string && Int(b) <= count &- p &- 2 { return p &+ 2 &+ Int(b) }
                if (t == BinaryTag.object || t == BinaryTag.array) && p < count &- 2 {
                    let length = byte(p &+ 2)
                    if length < 0x80 && Int(length) <= count &- p &- 3 { return p &+ 3 &+ Int(length) }
                }
            }
        }
        return try skipValue(at: p)
    }

    /// Returns the offset just past the value starting at `p`. Never recurses more than one level.
    @usableFromInline
    package func skipValue(at p: Int) throws -> Int {
        let t = try tag(at: p)
        var q = p + 1
        switch t {
        case BinaryTag.null, BinaryTag.falseValue, BinaryTag.trueValue:
            return q
        case BinaryTag.int, BinaryTag.uint:
            _ = try varint(&q)
            return q
        case BinaryTag.float:
            try need(q, 4)
            return q + 4
        case BinaryTag.double, BinaryTag.date:
            try need(q, 8)
            return q + 8
        case BinaryTag.uuid:
            try need(q, 16)
            return q + 16
        case BinaryTag.string, BinaryTag.bytes, BinaryTag.url, BinaryTag.decimal:
            let n = try length(&q)
            return q + n
        case BinaryTag.array, BinaryTag.object:
            _ = try varint(&q)
            let n = try length(&q)
            return q + n
        case BinaryTag.reference:
            let n = try length(&q)
            q += n
            guard try tag(at: q) != BinaryTag.reference else {
                throw BinaryCodecError.malformed(offset: q, reason: "reference id cannot be a reference")
            }
            return try skipValue(at: q)
        default:
            throw BinaryCodecError.malformed(offset: p, reason: "unknown tag \(t)")
        }
    }

    /// Checks the version byte and size; returns the offset of the root value.
    package static func checkHeader(_ r: BinaryReader) throws -> Int {
        guard r.count > 0 else { throw BinaryCodecError.emptyInput }
        guard r.count < Int(UInt32.max) else { throw BinaryCodecError.inputTooLarge(r.count) }
        let v = r.byte(0)
        guard v == BinaryFormat.version else { throw BinaryCodecError.unsupportedVersion(v) }
        return 1
    }
}

#if _pointerBitWidth(_64) && _endian(little)
/// The ASCII string of the `n` (0...15) bytes at `bytes`, made from the two words of the
/// standard library's small-string form (`BinaryReader.smallASCIIBits(_:_:)`) where that layout
/// holds (`BinaryReader.smallStringLayoutHolds`), else through
/// `String(unsafeUninitializedCapacity:)`: about 70 instructions fewer per string. A function of
/// its own (no metatype argument to drop through a thunk), not inlined: the decoders that inline
/// `BinaryReader.asciiString(_:_:)` stay small.
@usableFromInline @inline(never)
func depotSmallASCIIString(_ bytes: UnsafeRawPointer, _ n: Int) -> String {
    if _fastPath(BinaryReader.smallStringLayoutHolds) {
        // The words are stored over an empty string, which holds no object to release: the
        // result is then owned here and moved out (a cast would be copied, with a retain).
        let (low, high) = BinaryReader.smallASCIIBits(bytes, n)
        var string = ""
        withUnsafeMutableBytes(of: &string) { words in
            words.storeBytes(of: low, toByteOffset: 0, as: UInt64.self)
            words.storeBytes(of: high, toByteOffset: 8, as: UInt64.self)
        }
        return string
    }
    return String(unsafeUninitializedCapacity: n) { target in
        if let start = target.baseAddress { UnsafeMutableRawPointer(start).copyMemory(from: bytes, byteCount: n) }
        return n
    }
}
#endif
