import Foundation

extension DocumentValue {
    /// Parses a value from Depot's binary format (version byte + one tagged value).
    ///
    /// URL and Decimal tags become `.string`, Float becomes `.double`, integer object keys become
    /// their decimal string. Any byte sequence either parses or throws `BinaryCodecError`.
    public init(binary: UnsafeRawBufferPointer) throws {
        let reader = BinaryReader(binary)
        var p = try BinaryReader.checkHeader(reader)
        self = try reader.documentValue(&p, depth: 0)
        guard p == reader.count else {
            throw BinaryCodecError.malformed(offset: p, reason: "trailing bytes after the root value")
        }
    }

    /// Parses a value from Depot's binary format.
    public init(binary: [UInt8]) throws {
        self = try binary.withUnsafeBytes { try DocumentValue(binary: $0) }
    }

    /// Encodes this value in Depot's binary format; the result decodes with `BinaryDecoder`
    /// into any matching `Decodable` type.
    public func binary() -> [UInt8] {
        var b: [UInt8] = []
        b.reserveCapacity(64)
        b.append(BinaryFormat.version)
        write(into: &b)
        return b
    }

    /// Appends the tagged value (no version byte).
    func write(into b: inout [UInt8]) {
        switch self {
        case .null: b.append(BinaryTag.null)
        case .bool(let v): BinaryWriter.bool(v, &b)
        case .int(let v): BinaryWriter.signed(v, &b)
        case .uint(let v): BinaryWriter.unsigned(v, &b)
        case .double(let v): BinaryWriter.double(v, &b)
        case .string(let v): BinaryWriter.string(v, tag: BinaryTag.string, &b)
        case .bytes(let v): v.withUnsafeBytes { BinaryWriter.bytes($0, &b) }
        case .date(let v): BinaryWriter.date(v, &b)
        case .uuid(let v): BinaryWriter.uuid(v, &b)
        case .array(let items):
            let s = BinaryWriter.beginContainer(BinaryTag.array, &b)
            for item in items { item.write(into: &b) }
            BinaryWriter.endContainer(start: s, count: items.count, &b)
        case .object(let fields):
            let s = BinaryWriter.beginContainer(BinaryTag.object, &b)
            for f in fields {
                BinaryWriter.stringKey(f.key, &b)
                f.value.write(into: &b)
            }
            BinaryWriter.endContainer(start: s, count: fields.count, &b)
        case .reference(let collection, let id):
            b.append(BinaryTag.reference)
            BinaryWriter.stringPayload(collection, &b)
            if case .reference = id { b.append(BinaryTag.null) } else { id.write(into: &b) }
        }
    }
}

extension BinaryReader {
    /// Reads one tagged value at `p` as a `DocumentValue`, advancing `p`. Recursion is capped.
    package func documentValue(_ p: inout Int, depth: Int) throws -> DocumentValue {
        guard depth < BinaryFormat.maxDepth else { throw BinaryCodecError.nestingTooDeep(limit: BinaryFormat.maxDepth) }
        let t = try tag(at: p)
        var q = p + 1
        let v: DocumentValue
        switch t {
        case BinaryTag.null: v = .null
        case BinaryTag.falseValue: v = .bool(false)
        case BinaryTag.trueValue: v = .bool(true)
        case BinaryTag.int: v = .int(BinaryWriter.unzigzag(try varint(&q)))
        case BinaryTag.uint: v = .uint(try varint(&q))
        case BinaryTag.float: v = .double(Double(Float(bitPattern: try fixed32(&q))))
        case BinaryTag.double: v = .double(Double(bitPattern: try fixed64(&q)))
        case BinaryTag.string, BinaryTag.url, BinaryTag.decimal: v = .string(try stringPayload(&q))
        case BinaryTag.bytes:
            let n = try length(&q)
            v = .bytes([UInt8](UnsafeRawBufferPointer(start: base + q, count: n)))
            q += n
        case BinaryTag.date: v = .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try fixed64(&q))))
        case BinaryTag.uuid: v = .uuid(try uuidPayload(&q))
        case BinaryTag.array:
            let (n, end) = try containerHeader(&q, minEntrySize: 1)
            var items: [DocumentValue] = []
            items.reserveCapacity(n)
            for _ in 0..<n {
                items.append(try documentValue(&q, depth: depth + 1))
                guard q <= end else { throw BinaryCodecError.malformed(offset: q, reason: "element exceeds its array") }
            }
            guard q == end else { throw BinaryCodecError.malformed(offset: q, reason: "array length mismatch") }
            v = .array(items)
        case BinaryTag.object:
            let (n, end) = try containerHeader(&q, minEntrySize: 2)
            var fields: [DocumentValue.Field] = []
            fields.reserveCapacity(n)
            for _ in 0..<n {
                let k = try keyString(&q)
                fields.append(DocumentValue.Field(k, try documentValue(&q, depth: depth + 1)))
                guard q <= end else { throw BinaryCodecError.malformed(offset: q, reason: "entry exceeds its object") }
            }
            guard q == end else { throw BinaryCodecError.malformed(offset: q, reason: "object length mismatch") }
            v = .object(fields)
        case BinaryTag.reference:
            let collection = try stringPayload(&q)
            guard try tag(at: q) != BinaryTag.reference else {
                throw BinaryCodecError.malformed(offset: q, reason: "reference id cannot be a reference")
            }
            v = .reference(collection: collection, id: try documentValue(&q, depth: depth + 1))
        default:
            throw BinaryCodecError.malformed(offset: p, reason: "unknown tag \(t)")
        }
        p = q
        return v
    }
}
