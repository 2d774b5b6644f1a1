import Foundation

/// Readers for scalar values. Each reads the tagged value at `p`, advances `p` past it, and reports
/// mismatches with the coding path `path(depth) + [key]`.
extension BinaryDecoderImpl {
    /// Decodes one of the natively supported non-core types.
    func decodeFast<T: Decodable, K: CodingKey>(_ kind: FastKind, _: T.Type, _ p: inout Int, _ depth: Int, _ typedKey: K,
                                                advance: Bool) throws -> T {
        if kind == .stringArray {
            guard let v = try readStringArray(&p, depth, typedKey) else {
                return try decodeComposite(T.self, &p, depth, typedKey, advance: advance)
            }
            return unsafeBitCast(v, to: T.self)
        }
        let key = anyKey(typedKey)
        switch kind {
        case .stringArray:
            return try decodeComposite(T.self, &p, depth, typedKey, advance: advance) // read above
        case .byteArray:
            guard try reader.tag(at: p) == BinaryTag.bytes else {
                return try decodeComposite(T.self, &p, depth, typedKey, advance: advance)
            }
            var q = p + 1
            let n = try reader.length(&q)
            let v = [UInt8](UnsafeRawBufferPointer(start: reader.base + q, count: n))
            p = q + n
            return unsafeBitCast(v, to: T.self)
        case .date: return unsafeBitCast(try readDate(&p, depth, key), to: T.self)
        case .data: return unsafeBitCast(try readData(&p, depth, key), to: T.self)
        case .uuid: return unsafeBitCast(try readUUID(&p, depth, key), to: T.self)
        case .url: return unsafeBitCast(try readURL(&p, depth, key), to: T.self)
        case .decimal: return unsafeBitCast(try readDecimal(&p, depth, key), to: T.self)
        case .document: return unsafeBitCast(try reader.documentValue(&p, depth: nesting), to: T.self)
        case .float: return unsafeBitCast(try readFloat(&p, depth, key), to: T.self)
        case .int64: return unsafeBitCast(try readInteger(Int64.self, &p, depth, key), to: T.self)
        case .int32: return unsafeBitCast(try readInteger(Int32.self, &p, depth, key), to: T.self)
        case .int16: return unsafeBitCast(try readInteger(Int16.self, &p, depth, key), to: T.self)
        case .int8: return unsafeBitCast(try readInteger(Int8.self, &p, depth, key), to: T.self)
        case .uint64: return unsafeBitCast(try readInteger(UInt64.self, &p, depth, key), to: T.self)
        case .uint: return unsafeBitCast(try readInteger(UInt.self, &p, depth, key), to: T.self)
        case .uint32: return unsafeBitCast(try readInteger(UInt32.self, &p, depth, key), to: T.self)
        case .uint16: return unsafeBitCast(try readInteger(UInt16.self, &p, depth, key), to: T.self)
        case .uint8: return unsafeBitCast(try readInteger(UInt8.self, &p, depth, key), to: T.self)
        }
    }

    @inline(__always)
    func readNil(at p: Int) throws -> Bool {
        try reader.tag(at: p) == BinaryTag.null
    }

    func readBool(_ p: inout Int, _ depth: Int, _ key: (any CodingKey)?) throws -> Bool {
        let t = try reader.tag(at: p)
        if t == BinaryTag.trueValue { p += 1; return true }
        if t == BinaryTag.falseValue { p += 1; return false }
        return try readSlow(Bool.self, &p, depth, key, t)
    }

    func readString(_ p: inout Int, _ depth: Int, _ key: (any CodingKey)?) throws -> String {
        let t = try reader.tag(at: p)
        if t == BinaryTag.string || t == BinaryTag.url || t == BinaryTag.decimal {
            var q = p + 1
            let n = try reader.length(&q)
            let s = try string(q, n)
            p = q + n
            return s
        }
        return try readSlow(String.self, &p, depth, key, t)
    }

    func readStringArray<K: CodingKey>(_ p: inout Int, _ depth: Int, _ key: K) throws -> [String]? {
        guard try reader.tag(at: p) == BinaryTag.array else { return nil }
        var q = p + 1
        let (n, end) = try reader.containerHeader(&q, minEntrySize: 1)
        var result: [String] = []
        result.reserveCapacity(n)
        for i in 0..<n {
            let t = try reader.tag(at: q)
            guard t == BinaryTag.string else {
                if t == BinaryTag.reference && resolver != nil { return nil }  // let the generic path resolve
                throw mismatch(String.self, t, path: path(depth, anyKey(key)) + [IndexKey(i)])
            }
            q += 1
            let n = try reader.length(&q)
            result.append(try reader.makeString(q, n))
            q += n
        }
        guard q == end else { throw BinaryCodecError.malformed(offset: q, reason: "array length mismatch") }
        p = q
        return result
    }

    func readDouble(_ p: inout Int, _ depth: Int, _ key: (any CodingKey)?) throws -> Double {
        let t = try reader.tag(at: p)
        var q = p + 1
        let v: Double
        switch t {
        case BinaryTag.double: v = Double(bitPattern: try reader.fixed64(&q))
        case BinaryTag.float: v = Double(Float(bitPattern: try reader.fixed32(&q)))
        case BinaryTag.int: v = Double(BinaryWriter.unzigzag(try reader.varint(&q)))
        case BinaryTag.uint: v = Double(try reader.varint(&q))
        case BinaryTag.string:
            // JSON has no NaN or infinity: export writes them as these words (see
            // `DocumentValue.jsonData`), and an import stores the words; they read back here.
            guard let special = Self.nonFinite(try reader.stringPayload(&q)) else { return try readSlow(Double.self, &p, depth, key, t) }
            v = special
        default: return try readSlow(Double.self, &p, depth, key, t)
        }
        p = q
        return v
    }

    /// The non-finite number a word of JSON output names (`"NaN"`, `"Infinity"`, `"-Infinity"`).
    static func nonFinite(_ word: String) -> Double? {
        switch word {
        case "NaN": return .nan
        case "Infinity": return .infinity
        case "-Infinity": return -.infinity
        default: return nil
        }
    }

    func readFloat(_ p: inout Int, _ depth: Int, _ key: (any CodingKey)?) throws -> Float {
        let t = try reader.tag(at: p)
        var q = p + 1
        let v: Float
        switch t {
        case BinaryTag.float: v = Float(bitPattern: try reader.fixed32(&q))
        case BinaryTag.string:
            guard let special = Self.nonFinite(try reader.stringPayload(&q)) else { return try readSlow(Float.self, &p, depth, key, t) }
            v = Float(special)
        case BinaryTag.double:
            let d = Double(bitPattern: try reader.fixed64(&q))
            guard !d.isFinite || abs(d) <= Double(Float.greatestFiniteMagnitude) else {
                throw corrupted("A stored number does not fit in Float.", depth, key)
            }
            v = Float(d)
        case BinaryTag.int: v = Float(BinaryWriter.unzigzag(try reader.varint(&q)))
        case BinaryTag.uint: v = Float(try reader.varint(&q))
        default: return try readSlow(Float.self, &p, depth, key, t)
        }
        p = q
        return v
    }

    func readInteger<I: FixedWidthInteger & Decodable>(_: I.Type, _ p: inout Int, _ depth: Int, _ key: (any CodingKey)?) throws -> I {
        let t = try reader.tag(at: p)
        var q = p + 1
        switch t {
        case BinaryTag.int:
            let v = BinaryWriter.unzigzag(try reader.varint(&q))
            guard let r = I(exactly: v) else { throw corrupted("A stored number does not fit in \(I.self).", depth, key) }
            p = q
            return r
        case BinaryTag.uint:
            let v = try reader.varint(&q)
            guard let r = I(exactly: v) else { throw corrupted("A stored number does not fit in \(I.self).", depth, key) }
            p = q
            return r
        case BinaryTag.double, BinaryTag.float:
            let d = t == BinaryTag.double
                ? Double(bitPattern: try reader.fixed64(&q)) : Double(Float(bitPattern: try reader.fixed32(&q)))
            guard let r = I(exactly: d) else { throw corrupted("A stored number is not representable as \(I.self).", depth, key) }
            p = q
            return r
        default:
            return try readSlow(I.self, &p, depth, key, t)
        }
    }

    func readDate(_ p: inout Int, _ depth: Int, _ key: (any CodingKey)?) throws -> Date {
        let t = try reader.tag(at: p)
        var q = p + 1
        switch t {
        case BinaryTag.date, BinaryTag.double:
            let v = Date(timeIntervalSinceReferenceDate: Double(bitPattern: try reader.fixed64(&q)))
            p = q
            return v
        case BinaryTag.string:
            let s = try reader.stringPayload(&q)
            // A date that is no point in time is written to JSON as a non-finite number is.
            if let special = Self.nonFinite(s) {
                p = q
                return Date(timeIntervalSinceReferenceDate: special)
            }
            guard let d = DocumentValue.parseISO8601(s) else { throw corrupted("The stored string is not an ISO-8601 date.", depth, key) }
            p = q
            return d
        default:
            return try readSlow(Date.self, &p, depth, key, t)
        }
    }

    func readData(_ p: inout Int, _ depth: Int, _ key: (any CodingKey)?) throws -> Data {
        let t = try reader.tag(at: p)
        var q = p + 1
        switch t {
        case BinaryTag.bytes:
            let n = try reader.length(&q)
            let v = Data(bytes: reader.base + q, count: n)
            p = q + n
            return v
        case BinaryTag.string:
            let s = try reader.stringPayload(&q)
            guard let d = Data(base64Encoded: s) else { throw corrupted("Invalid base64 data.", depth, key) }
            p = q
            return d
        default:
            return try readSlow(Data.self, &p, depth, key, t)
        }
    }

    func readUUID(_ p: inout Int, _ depth: Int, _ key: (any CodingKey)?) throws -> UUID {
        let t = try reader.tag(at: p)
        var q = p + 1
        switch t {
        case BinaryTag.uuid:
            let v = try reader.uuidPayload(&q)
            p = q
            return v
        case BinaryTag.string:
            let s = try reader.stringPayload(&q)
            guard let v = UUID(uuidString: s) else { throw corrupted("The stored string is not a UUID.", depth, key) }
            p = q
            return v
        default:
            return try readSlow(UUID.self, &p, depth, key, t)
        }
    }

    func readURL(_ p: inout Int, _ depth: Int, _ key: (any CodingKey)?) throws -> URL {
        let t = try reader.tag(at: p)
        guard t == BinaryTag.url || t == BinaryTag.string else { return try readSlow(URL.self, &p, depth, key, t) }
        var q = p + 1
        let s = try reader.stringPayload(&q)
        guard let v = URL(string: s) else { throw corrupted("Invalid URL string.", depth, key) }
        p = q
        return v
    }

    func readDecimal(_ p: inout Int, _ depth: Int, _ key: (any CodingKey)?) throws -> Decimal {
        let t = try reader.tag(at: p)
        var q = p + 1
        let v: Decimal
        switch t {
        case BinaryTag.decimal, BinaryTag.string:
            let s = try reader.stringPayload(&q)
            guard let d = Decimal(string: s, locale: Locale(identifier: "en_US_POSIX")) else {
                throw corrupted("The stored string is not a decimal number.", depth, key)
            }
            v = d
        case BinaryTag.int: v = Decimal(BinaryWriter.unzigzag(try reader.varint(&q)))
        case BinaryTag.uint: v = Decimal(try reader.varint(&q))
        case BinaryTag.double:
            // Decimal(Double) traps on an infinity (a damaged record, or one a Double field wrote).
            let d = Double(bitPattern: try reader.fixed64(&q))
            guard !d.isInfinite else { throw corrupted("A stored number is infinite: Decimal cannot hold it.", depth, key) }
            v = Decimal(d)
        default: return try readSlow(Decimal.self, &p, depth, key, t)
        }
        p = q
        return v
    }
}

/// Types (other than String/Int/Bool/Double) decoded natively rather than through `init(from:)`.
enum FastKind {
    case stringArray, byteArray, date, data, uuid, url, decimal, document, float
    case int64, int32, int16, int8, uint64, uint, uint32, uint16, uint8

    @inline(__always)
    static func of(_ t: Any.Type) -> FastKind? {
        if t == [String].self { return .stringArray }
        if t == [UInt8].self { return .byteArray }
        if t == Date.self { return .date }
        if t == Data.self { return .data }
        if t == UUID.self { return .uuid }
        if t == URL.self { return .url }
        if t == Decimal.self { return .decimal }
        if t == DocumentValue.self { return .document }
        if t == Float.self { return .float }
        if t == Int64.self { return .int64 }
        if t == Int32.self { return .int32 }
        if t == Int16.self { return .int16 }
        if t == Int8.self { return .int8 }
        if t == UInt64.self { return .uint64 }
        if t == UInt.self { return .uint }
        if t == UInt32.self { return .uint32 }
        if t == UInt16.self { return .uint16 }
        if t == UInt8.self { return .uint8 }
        return nil
    }
}
