import Foundation

/// Order-preserving byte encoding of scalar values, for index keys: comparing the bytes
/// compares the values (numbers numerically, strings by Unicode scalar values).
package enum IndexKeyEncoding {
    /// Index keys longer than this are cut to it and followed by the SHA-256 of the whole key
    /// (``finish(_:)``): values sharing their first 400 bytes keep distinct keys (a unique index
    /// told them apart by that prefix only, and refused the second as a duplicate). Order holds
    /// up to the cut; queries re-check candidates, and range bounds of a cut key cover every key
    /// with its prefix (see ``rangeValueKey(_:)``).
    package static let maxValueBytes = 400
    /// The length of a cut key: ``maxValueBytes`` and a SHA-256.
    package static let cutKeyBytes = maxValueBytes + 32
    /// The key of a null (absent) value; unique indexes do not hold it.
    package static let nullKey: [UInt8] = [0x00]

    package static func encode(_ value: DocumentValue) -> [UInt8] {
        var out: [UInt8] = []
        append(value, to: &out)
        finish(&out)
        return out
    }

    /// Cuts a key longer than ``maxValueBytes`` to it and appends the SHA-256 of the whole key.
    package static func finish(_ out: inout [UInt8]) {
        guard out.count > maxValueBytes else { return }
        let digest = SHA256.hash(out)
        out.removeLast(out.count - maxValueBytes)
        out.append(contentsOf: digest)
    }

    /// The part of `key` that orders it among other keys, for range bounds: a cut key without its
    /// hash (every key sharing the cut prefix is then within the bounds, and re-checked).
    package static func rangeValueKey(_ key: [UInt8]) -> [UInt8] {
        key.count > maxValueBytes ? Array(key.prefix(maxValueBytes)) : key
    }

    /// Bytes that every key of a string starting with `prefix` starts with.
    package static func stringPrefix(_ prefix: String) -> [UInt8] {
        var out: [UInt8] = [0x20]
        appendEscaped(Array(prefix.utf8), to: &out)
        if out.count > maxValueBytes { out.removeLast(out.count - maxValueBytes) }
        return out
    }

    package static func append(_ value: DocumentValue, to out: inout [UInt8]) {
        switch value {
        case .null: out.append(0x00)
        case .bool(let b): out.append(boolTag); out.append(b ? 0x01 : 0x00) // one tag: ranges over both
        case .int(let i):
            // The nearest Double's bits as an integer (2^63 itself, past Int64.max, wraps to 1 << 63).
            let d = Double(i)
            let near = d >= 0x1p63 ? UInt64(1) << 63 : UInt64(bitPattern: Int64(d))
            appendNumber(d, residual: Int64(bitPattern: UInt64(bitPattern: i) &- near), to: &out)
        case .uint(let u):
            // (2^64 itself, past UInt64.max, wraps to 0.)
            let d = Double(u)
            let near = d >= 0x1p64 ? 0 : UInt64(d)
            appendNumber(d, residual: Int64(bitPattern: u &- near), to: &out)
        case .double(let d):
            appendNumber(d == 0 ? 0 : d, residual: 0, to: &out) // -0 as 0: one key for equal numbers
        case .string(let s):
            out.append(0x20)
            var s = s
            s.withUTF8 { appendEscaped(UnsafeRawBufferPointer($0), to: &out) }
            out.append(0x00)
            out.append(0x00)
        case .bytes(let b): out.append(0x28); appendEscaped(b, to: &out); out.append(contentsOf: [0x00, 0x00])
        case .uuid(let u): out.append(0x30); withUnsafeBytes(of: u.uuid) { out.append(contentsOf: $0) }
        case .date(let d): out.append(0x40); appendBigEndian(orderedBits(d.timeIntervalSinceReferenceDate), to: &out)
        case .array, .object: out.append(0x50) // not indexable: all such values share one key
        case .reference(_, let id): out.append(0x60); append(id, to: &out)
        }
    }

    /// The tag of both booleans (false, then true: a range such as `< true` finds false).
    package static let boolTag: UInt8 = 0x01

    /// The tag of every number: integers, unsigned integers and doubles share one order.
    package static let numberTag: UInt8 = 0x10

    /// A number of any type: ``numberTag``, the ordered bits of `nearest` (the Double nearest the
    /// value), then the value's exact distance from it, `residual` (zero but for integers beyond
    /// 2^53, which a Double cannot hold). Byte order is numeric order across the types (nearest
    /// Doubles are in the values' order, and values sharing one are ordered by their distance
    /// from it), and equal numbers of different types (2, 2.0) have one key. Every number's key
    /// has the same length, so an entry's document key after it never decides the order of two
    /// numbers.
    static func appendNumber(_ nearest: Double, residual: Int64, to out: inout [UInt8]) {
        out.append(numberTag)
        appendBigEndian(orderedBits(nearest), to: &out)
        appendBigEndian(UInt64(bitPattern: residual) ^ (1 << 63), to: &out)
    }

    /// IEEE-754 bits transformed so that unsigned order equals numeric order.
    package static func orderedBits(_ d: Double) -> UInt64 {
        let bits = d.bitPattern
        return bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
    }

    package static func appendBigEndian(_ v: UInt64, to out: inout [UInt8]) {
        for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: v >> UInt64(shift))) }
    }

    /// 0x00 becomes 0x00 0xFF so that the terminator 0x00 0x00 sorts before any continuation.
    package static func appendEscaped(_ bytes: [UInt8], to out: inout [UInt8]) {
        bytes.withUnsafeBytes { appendEscaped($0, to: &out) }
    }

    /// ``appendEscaped(_:to:)-([UInt8],_)`` from raw bytes: copied at once when no byte is 0x00.
    package static func appendEscaped(_ bytes: UnsafeRawBufferPointer, to out: inout [UInt8]) {
        guard bytes.contains(0) else {
            out.append(contentsOf: bytes)
            return
        }
        for b in bytes {
            out.append(b)
            if b == 0 { out.append(0xFF) }
        }
    }
}
