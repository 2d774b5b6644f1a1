
extension BinaryReader {
    /// The value at `p` read inline, without a decoder, when `V` is one of the commonest scalar
    /// types and the value is stored in its short form: an `Int` in one or two varint bytes, a
    /// `Bool`, a `Double`, an ASCII `String` of fewer than 128 bytes. Nil for anything else, which
    /// the caller then decodes in general (the same value: these are the decoder's own readings
    /// of these forms).
    ///
    /// Inlinable: where it is specialized for `V`, the checks of other types fold away.
    @inlinable @inline(__always)
    package func shortScalar<V>(_: V.Type, at p: Int) -> V? {
        guard p >= 0 && p < count &- 1 else { return nil }
        let t = base.load(fromByteOffset: p, as: UInt8.self)
        let b0 = base.load(fromByteOffset: p &+ 1, as: UInt8.self)
        if V.self == Int.self {
            guard t == BinaryTag.int else { return nil }
            var v = UInt64(b0)
            if b0 >= 0x80 {
                guard p < count &- 2 else { return nil }
                let b1 = UInt64(base.load(fromByteOffset: p &+ 2, as: UInt8.self))
                guard b1 < 0x80 else { return nil }
                v = (v & 0x7F) | b1 << 7
            }
            let int = Int(Int64(bitPattern: (v >> 1) ^ (0 &- (v & 1)))) // zig-zag
            return unsafeBitCast(int, to: V.self)
        }
        if V.self == String.self {
            let n = Int(b0)
            guard t == BinaryTag.string && n < 0x80 && n <= count &- p &- 2 && Self.isASCII(base + (p &+ 2), n) else { return nil }
            return unsafeBitCast(Self.asciiString(base + (p &+ 2), n), to: V.self)
        }
        if V.self == Bool.self {
            if t == BinaryTag.trueValue { return unsafeBitCast(true, to: V.self) }
            if t == BinaryTag.falseValue { return unsafeBitCast(false, to: V.self) }
            return nil
        }
        if V.self == Double.self {
            guard t == BinaryTag.double && p <= count &- 9 else { return nil }
            let bits = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: p &+ 1, as: UInt64.self))
            return unsafeBitCast(Double(bitPattern: bits), to: V.self)
        }
        return nil
    }
}
