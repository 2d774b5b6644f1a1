import Foundation

/// Unkeyed container over the elements of one array. Three words, so it fits an existential inline.
struct BinaryUnkeyedDecodingContainer: UnkeyedDecodingContainer {
    let impl: BinaryDecoderImpl
    var pos: UInt32
    let elementCount: UInt32
    var index: UInt32
    let depth: UInt16
    /// The low bits of the decode it was made in (``BinaryDecoderImpl/currentNumber``): used in
    /// another, it throws (its reads are checked against the bytes of the decode running then
    /// anyway, so even a number that matches by wrapping around never reads out of them).
    let decode: UInt16

    var codingPath: [any CodingKey] { impl.path(Int(depth)) }
    var count: Int? { Int(elementCount) }
    var isAtEnd: Bool { index >= elementCount }
    var currentIndex: Int { Int(index) }

    @inline(__always)
    private func position<T>(_: T.Type) throws -> Int {
        guard _fastPath(UInt16(truncatingIfNeeded: impl.currentNumber) == decode) else { throw BinaryDecoderImpl.staleContainer() }
        guard index < elementCount else {
            throw DecodingError.valueNotFound(T.self, DecodingError.Context(
                codingPath: impl.path(Int(depth), IndexKey(Int(index))), debugDescription: "Unkeyed container is at end."))
        }
        return Int(pos)
    }

    @inline(__always)
    private mutating func advance(to p: Int) {
        pos = UInt32(truncatingIfNeeded: p)
        index += 1
    }

    private var key: IndexKey { IndexKey(Int(index)) }

    mutating func decodeNil() throws -> Bool {
        let p = try position(Any?.self)
        if try impl.readNil(at: p) {
            advance(to: p + 1)
            return true
        }
        return false
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool {
        var p = try position(type)
        let v = try impl.readBool(&p, Int(depth), key)
        advance(to: p)
        return v
    }

    mutating func decode(_ type: String.Type) throws -> String {
        var p = try position(type)
        let v = try impl.readString(&p, Int(depth), key)
        advance(to: p)
        return v
    }

    mutating func decode(_ type: Double.Type) throws -> Double {
        var p = try position(type)
        let v = try impl.readDouble(&p, Int(depth), key)
        advance(to: p)
        return v
    }

    mutating func decode(_ type: Float.Type) throws -> Float {
        var p = try position(type)
        let v = try impl.readFloat(&p, Int(depth), key)
        advance(to: p)
        return v
    }

    mutating func decode(_ type: Int.Type) throws -> Int { try integer() }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try integer() }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try integer() }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try integer() }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try integer() }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try integer() }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try integer() }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try integer() }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try integer() }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try integer() }

    @inline(__always)
    private mutating func integer<I: FixedWidthInteger & Decodable>() throws -> I {
        var p = try position(I.self)
        let v = try impl.readInteger(I.self, &p, Int(depth), key)
        advance(to: p)
        return v
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        var p = try position(type)
        let v = try impl.decodeValue(T.self, &p, Int(depth), key, advance: true)
        advance(to: p)
        return v
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let p = try position(KeyedDecodingContainer<NestedKey>.self)
        let next = try impl.reader.skipValue(at: p)
        try impl.pushKey(key, at: Int(depth))
        let c = try impl.openKeyed(NestedKey.self, at: p, depth: Int(depth) + 1)
        advance(to: next)
        return KeyedDecodingContainer(c)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let p = try position((any UnkeyedDecodingContainer).self)
        let next = try impl.reader.skipValue(at: p)
        try impl.pushKey(key, at: Int(depth))
        let c = try impl.openUnkeyed(at: p, depth: Int(depth) + 1)
        advance(to: next)
        return c
    }

    mutating func superDecoder() throws -> any Decoder {
        let p = try position((any Decoder).self)
        let next = try impl.reader.skipValue(at: p)
        let d = impl.makeSuperDecoder(at: p, depth: Int(depth), key: key)
        advance(to: next)
        return d
    }
}

/// Single-value container over the decoder's current value.
/// Three words, so it fits an existential inline.
struct BinarySingleValueDecodingContainer: SingleValueDecodingContainer {
    let impl: BinaryDecoderImpl
    private let value: Int
    private let valueDepth: Int32
    /// The low bits of the decode it was made in (as ``BinaryUnkeyedDecodingContainer/decode``).
    private let decode: UInt32

    init(impl: BinaryDecoderImpl, at offset: Int, depth: Int) {
        self.impl = impl
        value = offset
        valueDepth = Int32(truncatingIfNeeded: depth)
        decode = UInt32(truncatingIfNeeded: impl.currentNumber)
    }

    var depth: Int { Int(valueDepth) }

    /// The value's offset, in the decode it was made in only.
    private var offset: Int {
        get throws {
            guard _fastPath(UInt32(truncatingIfNeeded: impl.currentNumber) == decode) else { throw BinaryDecoderImpl.staleContainer() }
            return value
        }
    }

    var codingPath: [any CodingKey] { impl.path(depth) }

    private var noKey: (any CodingKey)? { nil }

    func decodeNil() -> Bool { (try? impl.readNil(at: offset)) ?? false }

    func decode(_ type: Bool.Type) throws -> Bool {
        var p = try offset
        return try impl.readBool(&p, depth, noKey)
    }

    func decode(_ type: String.Type) throws -> String {
        var p = try offset
        return try impl.readString(&p, depth, noKey)
    }

    func decode(_ type: Double.Type) throws -> Double {
        var p = try offset
        return try impl.readDouble(&p, depth, noKey)
    }

    func decode(_ type: Float.Type) throws -> Float {
        var p = try offset
        return try impl.readFloat(&p, depth, noKey)
    }

    func decode(_ type: Int.Type) throws -> Int { try integer() }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer() }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer() }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer() }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer() }
    func decode(_ type: UInt.Type) throws -> UInt { try integer() }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer() }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer() }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer() }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer() }

    @inline(__always)
    private func integer<I: FixedWidthInteger & Decodable>() throws -> I {
        var p = try offset
        return try impl.readInteger(I.self, &p, depth, noKey)
    }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        var p = try offset
        return try impl.decodeValue(T.self, &p, depth, NoKey(), advance: false)
    }
}
