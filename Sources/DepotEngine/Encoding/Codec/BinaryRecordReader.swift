import Foundation

/// Reads the fields of one record's top-level object in Depot's binary format (version 1): what
/// generated ``BinaryCodableDocument/init(binaryRecord:)`` implementations call.
///
/// `nextField(in:)` walks the stored entries in their stored order, skipping keys not in the
/// given table; after it returns a field, one `decode` or `decodeIfPresent` call reads its value
/// (a value left unread is skipped). Every read is bounds-checked: hostile bytes throw
/// ``BinaryCodecError`` or `DecodingError`, never trap. Strings must be valid UTF-8 (never repaired).
///
/// Not copyable: it points into the bytes of one decode (for a stored document, LMDB's map,
/// valid only inside the read), so a conformance cannot keep it past `init(binaryRecord:)`.
public struct BinaryRecordReader: ~Copyable {
    let impl: BinaryDecoderImpl
    /// The record's bytes (the same as `impl.reader`'s), for the inlined fast paths of
    /// ``nextField(in:)-(BinaryFieldTable)`` and the common `decode` overloads.
    @usableFromInline package let base: UnsafeRawPointer
    @usableFromInline package let count: Int
    /// Current offset: the next entry, or (after `nextField`) the current value.
    @usableFromInline package var p: Int
    /// Offset of the current value while it is unread, else -1.
    @usableFromInline package var valueStart = -1
    /// End offset of the object's entries.
    @usableFromInline package let end: Int
    @usableFromInline package var remaining: Int
    /// The table index expected next (fields are usually stored in declaration order).
    @usableFromInline package var expected = 0
    @usableFromInline package var current: StaticString = ""
    /// The UTF-8 bytes of a string the caller already holds (the ID a document is retrieved by,
    /// kept by the decoder state: ``knownString()``), valid while the reader is: a string field
    /// with exactly these bytes is returned as that string, sharing its storage instead of
    /// allocating a copy. `knownCount` is -1 when there is none.
    @usableFromInline package var knownBytes: UnsafeRawPointer? = nil
    @usableFromInline package var knownCount = -1

    @inline(__always)
    init(impl: BinaryDecoderImpl, at offset: Int, decoding type: Any.Type) throws {
        // Every check before the first assignment: no partly initialized `self` to copy and destroy.
        let r = impl.reader
        var q = offset + 3
        let n: Int, end: Int
        if offset >= 0 && offset < r.count - 3 && r.byte(offset) == BinaryTag.object
            && r.byte(offset + 1) < 0x80 && r.byte(offset + 2) < 0x80
            && Int(r.byte(offset + 1)) <= Int(r.byte(offset + 2)) / 2 && Int(r.byte(offset + 2)) <= r.count - q {
            // The usual small object: one-byte entry count and length (what containerHeader reads).
            n = Int(r.byte(offset + 1))
            end = q + Int(r.byte(offset + 2))
        } else {
            let t = try r.tag(at: offset)
            guard t == BinaryTag.object else { throw impl.mismatch(type: type, t, path: []) }
            q = offset + 1
            (n, end) = try r.containerHeader(&q, minEntrySize: 2)
        }
        self.impl = impl
        base = impl.reader.base
        count = impl.reader.count
        p = q
        self.end = end
        remaining = n
    }

    /// The coding key of the current field (for coding paths).
    var key: StaticKey { StaticKey(current) }

    /// Moves to the next stored entry whose key is in `table`; returns its index, or nil after the
    /// last entry. The same as ``nextField(in:)-([StaticString])`` with the table's names, with
    /// a fast path for the field stored where it is expected.
    /// Inlinable, so that the fast path runs inside the generated initializer (no call per field).
    /// - Throws: ``BinaryCodecError`` when the object's entries are malformed.
    @inlinable @inline(__always)
    public mutating func nextField(in table: BinaryFieldTable) throws -> Int? {
        // Offsets are within the record (0...count) and key lengths at most 8: the arithmetic
        // below cannot overflow, so it wraps instead of checking.
        let e = expected
        if e < table.entries.count && remaining > 0 && p != valueStart {
            let entry = table.entries[e]
            // Eight readable bytes at p, and the key followed by at least one value byte in the object.
            if entry.length > 0 && p <= count &- 8 && p < end &- entry.length
                && base.loadUnaligned(fromByteOffset: p, as: UInt64.self) & entry.mask == entry.word {
                remaining &-= 1
                p &+= entry.length
                valueStart = p
                current = entry.name
                expected = e &+ 1
                return e
            }
        } else if remaining == 0 && p == end && p != valueStart { // every entry read: the usual end
            valueStart = -1
            return nil
        }
        return try nextField(in: table.names)
    }

    /// Moves to the next stored entry whose key is in `names`; returns its index in `names`, or nil
    /// after the last entry.
    /// - Throws: ``BinaryCodecError`` when the object's entries are malformed.
    public mutating func nextField(in names: [StaticString]) throws -> Int? {
        let r = impl.reader
        while true {
            if valueStart >= 0 && p == valueStart { p = try r.skipValue(at: p) }
            guard p <= end else { throw BinaryCodecError.malformed(offset: p, reason: "value exceeds its object") }
            guard remaining > 0 else {
                guard p == end else { throw BinaryCodecError.malformed(offset: p, reason: "object length mismatch") }
                valueStart = -1
                return nil
            }
            remaining -= 1
            var q = p
            let h = try r.varint(&q)
            let found: Int?
            if h & 1 == 0 {
                guard q <= end, h >> 1 <= UInt64(end - q) else {
                    throw BinaryCodecError.malformed(offset: q, reason: "key exceeds its object")
                }
                let n = Int(h >> 1)
                found = Self.match(r.base + q, n, names, expected)
                q += n
            } else {
                guard h == 1 else { throw BinaryCodecError.malformed(offset: q, reason: "invalid key header") }
                var text = String(BinaryWriter.unzigzag(try r.varint(&q)))
                found = text.withUTF8 { u in
                    u.baseAddress.flatMap { Self.match(UnsafeRawPointer($0), u.count, names, expected) }
                }
            }
            p = q
            valueStart = q
            if let found {
                current = names[found]
                expected = found + 1
                return found
            }
        }
    }

    private static func match(_ bytes: UnsafeRawPointer, _ n: Int, _ names: [StaticString], _ expected: Int) -> Int? {
        if expected < names.count && equal(bytes, n, names[expected]) { return expected }
        for i in names.indices where i != expected && equal(bytes, n, names[i]) { return i }
        return nil
    }

    /// Field names are short: compared in place, without a call to `memcmp`.
    @inline(__always)
    private static func equal(_ bytes: UnsafeRawPointer, _ n: Int, _ name: StaticString) -> Bool {
        guard name.hasPointerRepresentation else { return name.withUTF8Buffer { u in u.elementsEqual(UnsafeRawBufferPointer(start: bytes, count: n)) } }
        guard name.utf8CodeUnitCount == n else { return false }
        let other = UnsafeRawPointer(name.utf8Start)
        var i = 0
        while i + 8 <= n {
            if bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self) != other.loadUnaligned(fromByteOffset: i, as: UInt64.self) { return false }
            i += 8
        }
        while i < n {
            if bytes.load(fromByteOffset: i, as: UInt8.self) != other.load(fromByteOffset: i, as: UInt8.self) { return false }
            i += 1
        }
        return true
    }

    /// Skips the entries not read yet and checks that the object ends where its header says.
    mutating func finish() throws {
        if remaining == 0 && p == end && p != valueStart { return } // the usual case: all read
        while try nextField(in: []) != nil {}
    }

    /// Ends the decode the reader belongs to (its decoder's state is dropped).
    @usableFromInline
    package func close() { impl.end() }

    /// ``finish()`` for the record's root object, which must also end the input.
    /// Inlinable: the usual end — every entry read, the object ending the input — is one check.
    @inlinable @inline(__always)
    package mutating func finishRoot() throws {
        if remaining == 0 && p == end && p != valueStart && end == count { return }
        try finishRootInGeneral()
    }

    @usableFromInline
    package mutating func finishRootInGeneral() throws {
        try finish()
        guard end == count else {
            throw BinaryCodecError.malformed(offset: end, reason: "trailing bytes after the root value")
        }
    }

    /// The error for a required field absent from the record (`DecodingError.keyNotFound`).
    public func missingField(_ name: StaticString) -> DecodingError {
        DecodingError.keyNotFound(StaticKey(name), DecodingError.Context(
            codingPath: [], debugDescription: "No value associated with key \"\(name)\"."))
    }

    /// Whether the current value is null (it is then consumed).
    private mutating func takeNil() throws -> Bool {
        guard try impl.readNil(at: p) else { return false }
        p += 1
        return true
    }

    /// Reads the current field as a `Bool`.
    public mutating func decode(_: Bool.Type) throws -> Bool { try read { try $0.readBool(&$1, 0, Self.noKey) } }
    /// Reads the current field as a `String` (valid UTF-8 only).
    ///
    /// Inlinable: a short ASCII string (tag, one length byte, bytes inside the record) is read
    /// without a call into the decoder; anything else takes the general path.
    @inlinable @inline(__always)
    public mutating func decode(_: String.Type) throws -> String {
        // Offsets within the record and one-byte lengths: wrapping arithmetic cannot overflow.
        if p >= 0 && p < count &- 1 && base.load(fromByteOffset: p, as: UInt8.self) == BinaryTag.string {
            let n = Int(base.load(fromByteOffset: p &+ 1, as: UInt8.self))
            let start = p &+ 2
            if n < 0x80 && n <= count &- start {
                if n == knownCount, let knownBytes, BinaryReader.bytesEqual(base + start, knownBytes, n) {
                    p = start &+ n
                    return knownString()
                }
                if BinaryReader.isASCII(base + start, n) {
                    p = start &+ n
                    return BinaryReader.asciiString(base + start, n)
                }
            }
        }
        return try decodeString()
    }

    /// Makes string fields with exactly `bytes` (the UTF-8 of `string`, valid while the reader
    /// is) decode as `string`.
    @usableFromInline
    package mutating func share(_ string: String, bytes: UnsafeRawBufferPointer) {
        guard let start = bytes.baseAddress else { return }
        impl.known = string
        knownBytes = start
        knownCount = bytes.count
    }

    /// The string whose bytes are `knownBytes`.
    @usableFromInline
    package func knownString() -> String { impl.known }

    @usableFromInline
    package mutating func decodeString() throws -> String { try read { try $0.readString(&$1, 0, Self.noKey) } }
    /// Reads the current field as a `Double`.
    public mutating func decode(_: Double.Type) throws -> Double { try read { try $0.readDouble(&$1, 0, Self.noKey) } }
    /// Reads the current field as a `Float`.
    public mutating func decode(_: Float.Type) throws -> Float { try read { try $0.readFloat(&$1, 0, Self.noKey) } }
    /// Reads the current field as a `Date`.
    public mutating func decode(_: Date.Type) throws -> Date { try read { try $0.readDate(&$1, 0, Self.noKey) } }
    /// Reads the current field as a `UUID`.
    public mutating func decode(_: UUID.Type) throws -> UUID { try read { try $0.readUUID(&$1, 0, Self.noKey) } }
    /// Reads the current field as an `Int`.
    ///
    /// Inlinable: a signed integer stored in one or two varint bytes is read without a call into
    /// the decoder; anything else takes the general path.
    @inlinable @inline(__always)
    public mutating func decode(_: Int.Type) throws -> Int {
        if p >= 0 && p < count &- 1 && base.load(fromByteOffset: p, as: UInt8.self) == BinaryTag.int {
            let b0 = UInt64(base.load(fromByteOffset: p &+ 1, as: UInt8.self))
            if b0 < 0x80 {
                p &+= 2
                return Int(Int64(bitPattern: (b0 >> 1) ^ (0 &- (b0 & 1))))  // zig-zag
            }
            let b1 = p < count &- 2 ? UInt64(base.load(fromByteOffset: p &+ 2, as: UInt8.self)) : 0x80
            if b1 < 0x80 {
                p &+= 3
                let v = (b0 & 0x7F) | b1 << 7
                return Int(Int64(bitPattern: (v >> 1) ^ (0 &- (v & 1))))
            }
        }
        return try decodeInt()
    }

    @usableFromInline
    package mutating func decodeInt() throws -> Int { try read { try $0.readInteger(Int.self, &$1, 0, Self.noKey) } }
    /// Reads the current field as an `Int8`.
    public mutating func decode(_: Int8.Type) throws -> Int8 { try read { try $0.readInteger(Int8.self, &$1, 0, Self.noKey) } }
    /// Reads the current field as an `Int16`.
    public mutating func decode(_: Int16.Type) throws -> Int16 { try read { try $0.readInteger(Int16.self, &$1, 0, Self.noKey) } }
    /// Reads the current field as an `Int32`.
    public mutating func decode(_: Int32.Type) throws -> Int32 { try read { try $0.readInteger(Int32.self, &$1, 0, Self.noKey) } }
    /// Reads the current field as an `Int64`.
    public mutating func decode(_: Int64.Type) throws -> Int64 { try read { try $0.readInteger(Int64.self, &$1, 0, Self.noKey) } }
    /// Reads the current field as a `UInt`.
    public mutating func decode(_: UInt.Type) throws -> UInt { try read { try $0.readInteger(UInt.self, &$1, 0, Self.noKey) } }
    /// Reads the current field as a `UInt8`.
    public mutating func decode(_: UInt8.Type) throws -> UInt8 { try read { try $0.readInteger(UInt8.self, &$1, 0, Self.noKey) } }
    /// Reads the current field as a `UInt16`.
    public mutating func decode(_: UInt16.Type) throws -> UInt16 { try read { try $0.readInteger(UInt16.self, &$1, 0, Self.noKey) } }
    /// Reads the current field as a `UInt32`.
    public mutating func decode(_: UInt32.Type) throws -> UInt32 { try read { try $0.readInteger(UInt32.self, &$1, 0, Self.noKey) } }
    /// Reads the current field as a `UInt64`.
    public mutating func decode(_: UInt64.Type) throws -> UInt64 { try read { try $0.readInteger(UInt64.self, &$1, 0, Self.noKey) } }

    /// Reads the current field as `[String]` (the generic path when it holds references).
    ///
    /// Inlinable: a short array of short ASCII strings (one-byte counts and lengths) is read
    /// without a call into the decoder; anything else takes the general path.
    @inlinable @inline(__always)
    public mutating func decode(_: [String].Type) throws -> [String] {
        if p >= 0 && p < count &- 2 && base.load(fromByteOffset: p, as: UInt8.self) == BinaryTag.array {
            let n = Int(base.load(fromByteOffset: p &+ 1, as: UInt8.self))
            let length = Int(base.load(fromByteOffset: p &+ 2, as: UInt8.self))
            var q = p &+ 3
            if n < 0x80 && length < 0x80 && n <= length && length <= count &- q {
                let arrayEnd = q &+ length
                var strings: [String] = []
                strings.reserveCapacity(n)
                while strings.count < n && q < arrayEnd &- 1 && base.load(fromByteOffset: q, as: UInt8.self) == BinaryTag.string {
                    let m = Int(base.load(fromByteOffset: q &+ 1, as: UInt8.self))
                    guard m < 0x80 && m <= arrayEnd &- (q &+ 2) && BinaryReader.isASCII(base + (q &+ 2), m) else { break }
                    strings.append(BinaryReader.asciiString(base + (q &+ 2), m))
                    q &+= 2 &+ m
                }
                if strings.count == n && q == arrayEnd {
                    p = q
                    return strings
                }
            }
        }
        return try decodeStringArray()
    }

    @usableFromInline
    package mutating func decodeStringArray() throws -> [String] {
        if let strings = try read({ try $0.readStringArray(&$1, 0, NoKey()) }) { return strings }
        return try impl.decodeValue([String].self, &p, 0, key, advance: true)
    }

    /// Reads the current field as `[String]`, or nil when it is null.
    public mutating func decodeIfPresent(_: [String].Type) throws -> [String]? {
        try takeNil() ? nil : decode([String].self)
    }

    /// No coding key, as a constant: passing it borrows it (a `nil` literal would be destroyed
    /// after every call, through the optional existential's value witness).
    private static let noKey: (any CodingKey)? = nil

    /// Runs a scalar read at the current value with no coding key (no existential built per field)
    /// and puts the field's key in front of the coding path of a `DecodingError`.
    @inline(__always)
    private mutating func read<T>(_ body: (BinaryDecoderImpl, inout Int) throws -> T) throws -> T {
        do {
            return try body(impl, &p)
        } catch let error as DecodingError {
            throw error.prefixingPath(with: key)
        }
    }

    /// Reads the current field as any other type, through the generic `Codable` path (references
    /// resolved by the decoder's resolver).
    public mutating func decode<T: Decodable>(_: T.Type) throws -> T {
        try impl.decodeValue(T.self, &p, 0, key, advance: true)
    }

    /// Reads the current field as a `Bool`, or nil when it is null.
    public mutating func decodeIfPresent(_: Bool.Type) throws -> Bool? { try takeNil() ? nil : decode(Bool.self) }
    /// Reads the current field as a `String`, or nil when it is null.
    public mutating func decodeIfPresent(_: String.Type) throws -> String? { try takeNil() ? nil : decode(String.self) }
    /// Reads the current field as an `Int`, or nil when it is null.
    public mutating func decodeIfPresent(_: Int.Type) throws -> Int? { try takeNil() ? nil : decode(Int.self) }
    /// Reads the current field as an `Int64`, or nil when it is null.
    public mutating func decodeIfPresent(_: Int64.Type) throws -> Int64? { try takeNil() ? nil : decode(Int64.self) }
    /// Reads the current field as a `UInt64`, or nil when it is null.
    public mutating func decodeIfPresent(_: UInt64.Type) throws -> UInt64? { try takeNil() ? nil : decode(UInt64.self) }
    /// Reads the current field as a `Double`, or nil when it is null.
    public mutating func decodeIfPresent(_: Double.Type) throws -> Double? { try takeNil() ? nil : decode(Double.self) }
    /// Reads the current field as a `Date`, or nil when it is null.
    public mutating func decodeIfPresent(_: Date.Type) throws -> Date? { try takeNil() ? nil : decode(Date.self) }
    /// Reads the current field as a `UUID`, or nil when it is null.
    public mutating func decodeIfPresent(_: UUID.Type) throws -> UUID? { try takeNil() ? nil : decode(UUID.self) }

    /// Reads the current field as any other type, or nil when it is null.
    public mutating func decodeIfPresent<T: Decodable>(_: T.Type) throws -> T? {
        try takeNil() ? nil : decode(T.self)
    }
}

extension DecodingError {
    /// The same error with `key` in front of its coding path.
    func prefixingPath(with key: any CodingKey) -> DecodingError {
        func prefixed(_ c: Context) -> Context {
            Context(codingPath: [key] + c.codingPath, debugDescription: c.debugDescription, underlyingError: c.underlyingError)
        }
        switch self {
        case .typeMismatch(let type, let c): return .typeMismatch(type, prefixed(c))
        case .valueNotFound(let type, let c): return .valueNotFound(type, prefixed(c))
        case .keyNotFound(let missing, let c): return .keyNotFound(missing, prefixed(c))
        case .dataCorrupted(let c): return .dataCorrupted(prefixed(c))
        @unknown default: return self
        }
    }
}
