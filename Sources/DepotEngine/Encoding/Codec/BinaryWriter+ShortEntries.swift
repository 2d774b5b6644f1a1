/// The `Codable` encoder's most common entries (a string or integer under a string key, an array
/// of strings), each written with one append to the output instead of one per part: the bytes are
/// the same as the part-by-part writers' (`ShortEntryTests` checks both sides of every limit).
extension BinaryWriter {
    /// Writes a string key and a string value (`tag`, length, bytes) with one append when both
    /// are short: the same bytes as ``stringKey(_:_:)`` then ``string(_:tag:_:)``.
    static func keyedString(_ key: String, _ value: String, tag: UInt8, _ b: inout [UInt8]) {
        let done = key.utf8.withContiguousStorageIfAvailable { k in
            value.utf8.withContiguousStorageIfAvailable { v -> Bool in
                guard k.count + v.count <= ShortBytes.room - 20 else { return false }
                ShortBytes.append(to: &b) { out in
                    out.varint(UInt64(k.count) << 1)
                    out.bytes(k)
                    out.byte(tag)
                    out.varint(UInt64(v.count))
                    out.bytes(v)
                }
                return true
            } ?? false
        } ?? false
        if !done {
            stringKey(key, &b)
            string(value, tag: tag, &b)
        }
    }

    /// Writes a string key and a signed integer value with one append when the key is short: the
    /// same bytes as ``stringKey(_:_:)`` then ``signed(_:_:)``.
    static func keyedSigned(_ key: String, _ value: Int64, _ b: inout [UInt8]) {
        let done = key.utf8.withContiguousStorageIfAvailable { k -> Bool in
            guard k.count <= ShortBytes.room - 20 else { return false }
            ShortBytes.append(to: &b) { out in
                out.varint(UInt64(k.count) << 1)
                out.bytes(k)
                out.byte(BinaryTag.int)
                out.varint(zigzag(value))
            }
            return true
        } ?? false
        if !done {
            stringKey(key, &b)
            signed(value, &b)
        }
    }

    /// Writes an array of strings with one append when it is short: the same bytes as
    /// ``beginContainer(_:_:)``, ``string(_:tag:_:)`` per element, ``endContainer(start:count:_:)``.
    static func stringArray(_ strings: [String], _ b: inout [UInt8]) {
        var length = 0
        for s in strings { length += s.utf8.count + 2 }
        if strings.count < 0x80 && length < 0x80 {
            let done = ShortBytes.appendIf(to: &b) { out -> Bool in
                out.byte(BinaryTag.array)
                out.byte(UInt8(truncatingIfNeeded: strings.count))
                out.byte(0)
                for s in strings {
                    let stored = s.utf8.withContiguousStorageIfAvailable { v -> Bool in
                        out.byte(BinaryTag.string)
                        out.varint(UInt64(v.count))
                        out.bytes(v)
                        return true
                    }
                    if stored == nil { return false }
                }
                out.set(2, to: UInt8(truncatingIfNeeded: out.count - 3))
                return true
            }
            if done { return }
        }
        let start = beginContainer(BinaryTag.array, &b)
        for s in strings { string(s, tag: BinaryTag.string, &b) }
        endContainer(start: start, count: strings.count, &b)
    }
}

/// A few bytes written on the stack with plain stores, then appended to an output in one call
/// (a short entry costs one append instead of one per part). Writers check the size first: at
/// most ``room`` bytes.
struct ShortBytes {
    static let room = 256
    private let memory: UnsafeMutableBufferPointer<UInt8>
    private(set) var count = 0

    /// Runs `body` on stack memory, then appends what it wrote to `b`.
    @inline(__always)
    static func append(to b: inout [UInt8], _ body: (inout ShortBytes) -> Void) {
        _ = appendIf(to: &b) { out in
            body(&out)
            return true
        }
    }

    /// Runs `body` on stack memory, then appends what it wrote to `b` if it returns true.
    @inline(__always)
    static func appendIf(to b: inout [UInt8], _ body: (inout ShortBytes) -> Bool) -> Bool {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: room) { memory in
            var out = ShortBytes(memory: memory)
            guard body(&out) else { return false }
            b.append(contentsOf: UnsafeBufferPointer(rebasing: memory[..<out.count]))
            return true
        }
    }

    @inline(__always)
    mutating func byte(_ value: UInt8) {
        memory[count] = value
        count += 1
    }

    @inline(__always)
    package mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            byte(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        byte(UInt8(truncatingIfNeeded: v))
    }

    @inline(__always)
    mutating func bytes(_ source: UnsafeBufferPointer<UInt8>) {
        if let from = source.baseAddress, let to = memory.baseAddress {
            (to + count).update(from: from, count: source.count)
        }
        count += source.count
    }

    @inline(__always)
    func set(_ offset: Int, to value: UInt8) { memory[offset] = value }
}
