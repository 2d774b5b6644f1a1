import Foundation

/// `DocumentValue` is `Codable`. `BinaryEncoder`/`BinaryDecoder` handle it natively (exact tags);
/// with other coders it maps onto their primitives: bytes as `Data`, dates as `Date`, UUIDs as `UUID`,
/// references as `{"$ref": {"collection": C, "id": ID}}`. Decoding with other coders infers the kind.
extension DocumentValue: Codable {
    /// Encodes the tree with any `Encoder`.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var c = encoder.singleValueContainer()
            try c.encodeNil()
        case .bool(let v):
            var c = encoder.singleValueContainer()
            try c.encode(v)
        case .int(let v):
            var c = encoder.singleValueContainer()
            try c.encode(v)
        case .uint(let v):
            var c = encoder.singleValueContainer()
            try c.encode(v)
        case .double(let v):
            var c = encoder.singleValueContainer()
            try c.encode(v)
        case .string(let v):
            var c = encoder.singleValueContainer()
            try c.encode(v)
        case .bytes(let v):
            var c = encoder.singleValueContainer()
            try c.encode(Data(v))
        case .date(let v):
            var c = encoder.singleValueContainer()
            try c.encode(v)
        case .uuid(let v):
            var c = encoder.singleValueContainer()
            try c.encode(v)
        case .array(let items):
            var c = encoder.unkeyedContainer()
            for item in items { try c.encode(item) }
        case .object(let fields):
            var c = encoder.container(keyedBy: StringKey.self)
            for f in fields { try c.encode(f.value, forKey: StringKey(f.key)) }
        case .reference(let collection, let id):
            var c = encoder.container(keyedBy: StringKey.self)
            var inner = c.nestedContainer(keyedBy: StringKey.self, forKey: StringKey("$ref"))
            try inner.encode(collection, forKey: StringKey("collection"))
            try inner.encode(id, forKey: StringKey("id"))
        }
    }

    /// Decodes a tree from any `Decoder`, inferring kinds (bool, int, uint, double, string, array, object).
    public init(from decoder: any Decoder) throws {
        if let c = try? decoder.container(keyedBy: StringKey.self) {
            var fields: [Field] = []
            for key in c.allKeys {
                fields.append(Field(key.stringValue, try c.decode(DocumentValue.self, forKey: key)))
            }
            if fields.count == 1, fields[0].key == "$ref", let coll = fields[0].value["collection"]?.stringValue,
               let id = fields[0].value["id"] {
                self = .reference(collection: coll, id: id)
            } else {
                self = .object(fields)
            }
            return
        }
        if var c = try? decoder.unkeyedContainer() {
            var items: [DocumentValue] = []
            while !c.isAtEnd { items.append(try c.decode(DocumentValue.self)) }
            self = .array(items)
            return
        }
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let v = try? c.decode(Bool.self) { self = .bool(v) }
        else if let v = try? c.decode(Int64.self) { self = .int(v) }
        else if let v = try? c.decode(UInt64.self) { self = .uint(v) }
        else if let v = try? c.decode(Double.self) { self = .double(v) }
        else if let v = try? c.decode(String.self) { self = .string(v) }
        else {
            throw DecodingError.dataCorrupted(DecodingError.Context(
                codingPath: decoder.codingPath, debugDescription: "Value cannot be represented as a DocumentValue."))
        }
    }
}
