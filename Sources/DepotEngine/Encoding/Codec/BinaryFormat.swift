import Foundation

/// Type tags of the Depot binary format, version 1. Every encoded value starts with one tag byte.
/// Inlinable constants, not stored ones: another module (DepotCore's index keys) would reach a
/// `static let` through a call to its addressor at every comparison.
@usableFromInline
package enum BinaryTag {
    @inlinable package static var null: UInt8 { 0x00 }
    @inlinable package static var falseValue: UInt8 { 0x01 }
    @inlinable package static var trueValue: UInt8 { 0x02 }
    /// Zig-zag varint.
    @inlinable package static var int: UInt8 { 0x03 }
    /// Varint.
    @inlinable package static var uint: UInt8 { 0x04 }
    /// 4 bytes little-endian IEEE 754.
    @inlinable package static var float: UInt8 { 0x05 }
    /// 8 bytes little-endian IEEE 754.
    @inlinable package static var double: UInt8 { 0x06 }
    /// Varint length + UTF-8.
    @inlinable package static var string: UInt8 { 0x07 }
    /// Varint length + raw bytes.
    @inlinable package static var bytes: UInt8 { 0x08 }
    /// Varint count, varint byte length, elements.
    @inlinable package static var array: UInt8 { 0x09 }
    /// Varint count, varint byte length, entries (key + value).
    @inlinable package static var object: UInt8 { 0x0A }
    /// 8 bytes: Double seconds since the reference date.
    @inlinable package static var date: UInt8 { 0x0B }
    /// 16 raw bytes.
    @inlinable package static var uuid: UInt8 { 0x0C }
    /// Like a string (absolute URL string).
    @inlinable package static var url: UInt8 { 0x0D }
    /// Like a string (Decimal description).
    @inlinable package static var decimal: UInt8 { 0x0E }
    /// Collection string payload, then one tagged id value (never itself a reference).
    @inlinable package static var reference: UInt8 { 0x0F }

    static func name(_ tag: UInt8) -> String {
        switch tag {
        case null: return "null"
        case falseValue, trueValue: return "a boolean"
        case int: return "a signed integer"
        case uint: return "an unsigned integer"
        case float: return "a float"
        case double: return "a double"
        case string: return "a string"
        case bytes: return "bytes"
        case array: return "an array"
        case object: return "an object"
        case date: return "a date"
        case uuid: return "a UUID"
        case url: return "a URL"
        case decimal: return "a decimal"
        case reference: return "a reference"
        default: return "unknown tag \(tag)"
        }
    }
}

/// Constants of the binary format.
enum BinaryFormat {
    /// The format version written as the first byte of every encoding.
    static let version: UInt8 = 1
    /// Maximum nesting of containers / composite values, for both encoding and decoding.
    static let maxDepth = 512
}

/// Low-level append helpers. All functions take the output buffer `inout` so that one call is one access.
@usableFromInline
package enum BinaryWriter {
    @inline(__always)
    package static func varint(_ value: UInt64, _ b: inout [UInt8]) {
        var v = value
        while v >= 0x80 {
            b.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        b.append(UInt8(truncatingIfNeeded: v))
    }

    @inline(__always)
    static func varintSize(_ value: UInt64) -> Int {
        var v = value
        var n = 1
        while v >= 0x80 { v >>= 7; n += 1 }
        return n
    }

    @inlinable @inline(__always)
    static func zigzag(_ v: Int64) -> UInt64 { UInt64(bitPattern: (v &<< 1) ^ (v >> 63)) }

    @inlinable @inline(__always)
    package static func unzigzag(_ v: UInt64) -> Int64 { Int64(bitPattern: (v >> 1) ^ (0 &- (v & 1))) }

    @inline(__always)
    static func signed(_ v: Int64, _ b: inout [UInt8]) {
        b.append(BinaryTag.int)
        varint(zigzag(v), &b)
    }

    @inline(__always)
    static func unsigned(_ v: UInt64, _ b: inout [UInt8]) {
        b.append(BinaryTag.uint)
        varint(v, &b)
    }

    @inline(__always)
    static func bool(_ v: Bool, _ b: inout [UInt8]) {
        b.append(v ? BinaryTag.trueValue : BinaryTag.falseValue)
    }

    @inline(__always)
    package static func fixed64(_ v: UInt64, _ b: inout [UInt8]) {
        var x = v
        for _ in 0..<8 {
            b.append(UInt8(truncatingIfNeeded: x))
            x >>= 8
        }
    }

    @inline(__always)
    package static func double(_ v: Double, _ b: inout [UInt8]) {
        b.append(BinaryTag.double)
        fixed64(v.bitPattern, &b)
    }

    @inline(__always)
    static func float(_ v: Float, _ b: inout [UInt8]) {
        b.append(BinaryTag.float)
        var x = v.bitPattern
        for _ in 0..<4 {
            b.append(UInt8(truncatingIfNeeded: x))
            x >>= 8
        }
    }

    @inline(__always)
    static func date(_ v: Date, _ b: inout [UInt8]) {
        b.append(BinaryTag.date)
        fixed64(v.timeIntervalSinceReferenceDate.bitPattern, &b)
    }

    static func uuid(_ v: UUID, _ b: inout [UInt8]) {
        b.append(BinaryTag.uuid)
        withUnsafeBytes(of: v.uuid) { b.append(contentsOf: $0) }
    }

    /// Varint length followed by the UTF-8 bytes (no tag).
    @inline(__always)
    static func stringPayload(_ s: String, _ b: inout [UInt8]) {
        let u = s.utf8
        varint(UInt64(u.count), &b)
        if u.withContiguousStorageIfAvailable({ b.append(contentsOf: $0) }) == nil {
            b.append(contentsOf: u)
        }
    }

    @inline(__always)
    package static func string(_ s: String, tag: UInt8, _ b: inout [UInt8]) {
        b.append(tag)
        stringPayload(s, &b)
    }

    static func bytes(_ p: UnsafeRawBufferPointer, _ b: inout [UInt8]) {
        b.append(BinaryTag.bytes)
        varint(UInt64(p.count), &b)
        b.append(contentsOf: p)
    }

    /// Key header: even varint = string key of length `h >> 1`; `1` = integer key, zig-zag varint follows.
    @inline(__always)
    static func stringKey(_ s: String, _ b: inout [UInt8]) {
        let u = s.utf8
        varint(UInt64(u.count) << 1, &b)
        if u.withContiguousStorageIfAvailable({ b.append(contentsOf: $0) }) == nil {
            b.append(contentsOf: u)
        }
    }

    static func intKey(_ v: Int64, _ b: inout [UInt8]) {
        b.append(1)
        varint(zigzag(v), &b)
    }

    /// Writes a coding key. Integer keys whose string form is their decimal value (as for `[Int: X]`)
    /// are stored compactly as integer keys; everything else by `stringValue`.
    @inline(__always)
    static func codingKey<K: CodingKey>(_ key: K, _ b: inout [UInt8]) {
        if let i = key.intValue {
            let s = key.stringValue
            if s == String(i) { intKey(Int64(i), &b) } else { stringKey(s, &b) }
        } else {
            stringKey(key.stringValue, &b)
        }
    }

    /// Writes a container header with 1-byte placeholders; returns the tag position.
    @inline(__always)
    static func beginContainer(_ tag: UInt8, _ b: inout [UInt8]) -> Int {
        let start = b.count
        b.append(tag)
        b.append(0)
        b.append(0)
        return start
    }

    /// Backpatches count and byte length of the container whose tag is at `start`.
    @inline(__always)
    static func endContainer(start: Int, count: Int, _ b: inout [UInt8]) {
        let payloadStart = start + 3
        let len = b.count - payloadStart
        if count < 0x80 && len < 0x80 && start >= 0 && len >= 0 {
            // One uniqueness check for both stores (`start + 2 < b.count`: `len` is not negative).
            b.withUnsafeMutableBufferPointer { p in
                p[start + 1] = UInt8(truncatingIfNeeded: count)
                p[start + 2] = UInt8(truncatingIfNeeded: len)
            }
            return
        }
        endContainerSlow(start: start, count: count, len: len, &b)
    }

    static func endContainerSlow(start: Int, count: Int, len: Int, _ b: inout [UInt8]) {
        let cs = varintSize(UInt64(count))
        let ls = varintSize(UInt64(len))
        let extra = cs + ls - 2
        let payloadStart = start + 3
        b.append(contentsOf: repeatElement(0, count: extra))
        b.withUnsafeMutableBufferPointer { p in
            let base = p.baseAddress!
            if len > 0 { memmove(base + payloadStart + extra, base + payloadStart, len) }
            var i = start + 1
            for var v in [UInt64(count), UInt64(len)] {
                while v >= 0x80 {
                    base[i] = UInt8(truncatingIfNeeded: v) | 0x80
                    v >>= 7
                    i += 1
                }
                base[i] = UInt8(truncatingIfNeeded: v)
                i += 1
            }
        }
    }

    static func emptyObject(_ b: inout [UInt8]) {
        b.append(BinaryTag.object)
        b.append(0)
        b.append(0)
    }
}
