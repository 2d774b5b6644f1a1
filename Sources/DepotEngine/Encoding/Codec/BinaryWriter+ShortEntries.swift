/// The `Codable` encoder's most common entries (a string, an integer or an array of strings under
/// a string key, an array of strings), each written with one append to the output instead of one
/// per part: the bytes are the same as the part-by-part writers' (`ShortEntryTests` checks both
/// sides of every limit).
extension BinaryWriter {
    /// Writes a string key and a string value (`tag`, length, bytes) with one append when both
    /// are short: the same bytes as ``stringKey(_:_:)`` then ``string(_:tag:_:)``.
    static func keyedString(_ key: String, _ value: String, tag: UInt8, _ b: inout [UInt8]) {
        if !ShortBytes.appendIf(to: &b, { $0.keyedString(key, value, tag: tag) }) {
            stringKey(key, &b)
            string(value, tag: tag, &b)
        }
    }

    /// Writes a string key and a signed integer value with one append when the key is short: the
    /// same bytes as ``stringKey(_:_:)`` then ``signed(_:_:)``.
    static func keyedSigned(_ key: String, _ value: Int64, _ b: inout [UInt8]) {
        if !ShortBytes.appendIf(to: &b, { $0.keyedSigned(key, value) }) {
            stringKey(key, &b)
            signed(value, &b)
        }
    }

    /// Writes an array of strings with one append when it is short: the same bytes as
    /// ``beginContainer(_:_:)``, ``string(_:tag:_:)`` per element, ``endContainer(start:count:_:)``.
    static func stringArray(_ strings: [String], _ b: inout [UInt8]) {
        let length = ShortBytes.stringArrayLength(strings)
        if length >= 0 && ShortBytes.appendIf(to: &b, { $0.stringArray(strings, length: length) }) { return }
        let start = beginContainer(BinaryTag.array, &b)
        for s in strings { string(s, tag: BinaryTag.string, &b) }
        endContainer(start: start, count: strings.count, &b)
    }

    /// Writes a string key and an array of strings with one append when both are short: the
    /// same bytes as ``stringKey(_:_:)`` then ``stringArray(_:_:)``.
    static func keyedStringArray(_ key: String, _ strings: [String], _ b: inout [UInt8]) {
        if !ShortBytes.appendIf(to: &b, { $0.keyedStringArray(key, strings) }) {
            stringKey(key, &b)
            stringArray(strings, &b)
        }
    }
}

/// The short entries themselves, stored in a ``ShortBytes`` (the stack's, or the pending entries
/// of a `Codable` encoder): each returns false when its entry is not short (what it stored
/// then is dropped by the caller, who writes the entry part by part).
extension ShortBytes {
    /// A string key and a string value (`tag`, length, bytes), when both are short.
    @inline(__always)
    mutating func keyedString(_ key: String, _ value: String, tag: UInt8) -> Bool {
        key.utf8.withContiguousStorageIfAvailable { k in
            value.utf8.withContiguousStorageIfAvailable { v -> Bool in
                guard k.count + v.count <= ShortBytes.room - 20 else { return false }
                varint(UInt64(k.count) << 1)
                bytes(k)
                byte(tag)
                varint(UInt64(v.count))
                bytes(v)
                return true
            } ?? false
        } ?? false
    }

    /// A string key and a signed integer value, when the key is short.
    @inline(__always)
    mutating func keyedSigned(_ key: String, _ value: Int64) -> Bool {
        key.utf8.withContiguousStorageIfAvailable { k -> Bool in
            guard k.count <= ShortBytes.room - 20 else { return false }
            varint(UInt64(k.count) << 1)
            bytes(k)
            byte(BinaryTag.int)
            varint(BinaryWriter.zigzag(value))
            return true
        } ?? false
    }

    /// A string key and an array of strings, when both are short.
    @inline(__always)
    mutating func keyedStringArray(_ key: String, _ strings: [String]) -> Bool {
        let length = ShortBytes.stringArrayLength(strings)
        guard length >= 0 else { return false }
        return key.utf8.withContiguousStorageIfAvailable { k -> Bool in
            guard k.count + length <= ShortBytes.room - 20 else { return false }
            varint(UInt64(k.count) << 1)
            bytes(k)
            return stringArray(strings, length: length)
        } ?? false
    }

    /// The payload length of `strings` as an array whose header, element headers and length
    /// are one byte each (each element a tag, a one-byte length and its bytes), or -1 when
    /// it is not such an array.
    @inline(__always)
    static func stringArrayLength(_ strings: [String]) -> Int {
        guard strings.count < 0x80 else { return -1 }
        var length = 0
        for s in strings { length += s.utf8.count + 2 }
        return length < 0x80 ? length : -1
    }

    /// `strings` as an array of `length` payload bytes (``stringArrayLength(_:)``, not -1);
    /// false when a string's bytes are not contiguous.
    @inline(__always)
    mutating func stringArray(_ strings: [String], length: Int) -> Bool {
        byte(BinaryTag.array)
        byte(UInt8(truncatingIfNeeded: strings.count))
        byte(UInt8(truncatingIfNeeded: length))
        for s in strings {
            let stored = s.utf8.withContiguousStorageIfAvailable { v -> Bool in
                byte(BinaryTag.string)
                varint(UInt64(v.count))
                bytes(v)
                return true
            }
            if stored == nil { return false }
        }
        return true
    }
}

/// A few bytes written with plain stores, on the stack then appended to an output in one call
/// (a short entry costs one append instead of one per part), or among a `Codable` encoder's
/// pending entries (``BinaryEncoderImpl/appendShort(_:)``). Writers check the size first: at
/// most ``room`` bytes.
struct ShortBytes {
    static let room = 256
    private let memory: UnsafeMutableBufferPointer<UInt8>
    private(set) var count = 0

    /// Bytes stored from the start of `memory` (at least ``room`` bytes).
    @inline(__always)
    init(memory: UnsafeMutableBufferPointer<UInt8>) {
        self.memory = memory
    }

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

    /// Stores the bytes of `source`. Keys and most strings are short: up to 16 bytes are copied
    /// with a few (overlapping) loads and stores, without a call to `memcpy`.
    @inline(__always)
    mutating func bytes(_ source: UnsafeBufferPointer<UInt8>) {
        let n = source.count
        if let from = source.baseAddress, let base = memory.baseAddress {
            let to = UnsafeMutableRawPointer(base + count), bytes = UnsafeRawPointer(from)
            if n >= 8 && n <= 16 {
                to.storeBytes(of: bytes.loadUnaligned(as: UInt64.self), as: UInt64.self)
                to.storeBytes(of: bytes.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self), toByteOffset: n - 8, as: UInt64.self)
            } else if n >= 4 && n < 8 {
                to.storeBytes(of: bytes.loadUnaligned(as: UInt32.self), as: UInt32.self)
                to.storeBytes(of: bytes.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self), toByteOffset: n - 4, as: UInt32.self)
            } else if n > 16 {
                to.copyMemory(from: bytes, byteCount: n)
            } else if n > 0 { // 1 to 3 bytes: the first, the middle and the last
                to.storeBytes(of: bytes.load(as: UInt8.self), as: UInt8.self)
                to.storeBytes(of: bytes.load(fromByteOffset: n >> 1, as: UInt8.self), toByteOffset: n >> 1, as: UInt8.self)
                to.storeBytes(of: bytes.load(fromByteOffset: n - 1, as: UInt8.self), toByteOffset: n - 1, as: UInt8.self)
            }
        }
        count += n
    }
}
