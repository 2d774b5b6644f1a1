import Foundation

/// A schemaless document tree with the same data model as Depot's binary format.
///
/// Object fields keep their order. Equality and hashing are structural and type-exact
/// (`.int(3) != .double(3)`); use `compare(_:_:)` for numeric comparison across number kinds.
public enum DocumentValue: Sendable, Hashable {
    /// JSON `null` / `nil`.
    case null
    /// A boolean.
    case bool(Bool)
    /// A signed integer.
    case int(Int64)
    /// An unsigned integer (used for values above `Int64.max` or encoded from unsigned types).
    case uint(UInt64)
    /// A floating-point number (`Float` values are widened).
    case double(Double)
    /// A string (URLs and Decimals read from binary also appear as strings).
    case string(String)
    /// Raw bytes (`Data`, `[UInt8]`).
    case bytes([UInt8])
    /// A date.
    case date(Date)
    /// A UUID.
    case uuid(UUID)
    /// An ordered list of values.
    case array([DocumentValue])
    /// An ordered list of fields.
    case object([Field])
    /// A reference to a record `id` stored in `collection`.
    indirect case reference(collection: String, id: DocumentValue)

    /// One field of an object.
    public struct Field: Sendable, Hashable {
        /// The field name.
        public var key: String
        /// The field value.
        public var value: DocumentValue

        /// Creates a field.
        public init(_ key: String, _ value: DocumentValue) {
            self.key = key
            self.value = value
        }
    }

    /// Creates an object from ordered `(key, value)` pairs.
    public static func object(pairs: [(String, DocumentValue)]) -> DocumentValue {
        .object(pairs.map { Field($0.0, $0.1) })
    }

    /// The value of the first field named `key` if this is an object, otherwise nil.
    public subscript(key: String) -> DocumentValue? {
        guard case .object(let fields) = self else { return nil }
        for f in fields where f.key == key { return f.value }
        return nil
    }

    /// The element at `index` if this is an array and the index is in range, otherwise nil.
    public subscript(index: Int) -> DocumentValue? {
        guard case .array(let items) = self, items.indices.contains(index) else { return nil }
        return items[index]
    }

    /// Looks up a field path such as `address.zip`, `tags[2]`, `tags.2` or `items[0].name`.
    /// Numeric segments index arrays; other segments name object fields. Returns nil if any step fails.
    public subscript(path path: String) -> DocumentValue? {
        var current = self
        for segment in path.split(separator: ".", omittingEmptySubsequences: false) {
            var rest = Substring(segment)
            let name = rest.prefix { $0 != "[" }
            rest = rest.dropFirst(name.count)
            if !name.isEmpty {
                if case .array = current, let i = Int(name) {
                    guard let next = current[i] else { return nil }
                    current = next
                } else {
                    guard let next = current[String(name)] else { return nil }
                    current = next
                }
            } else if rest.isEmpty {
                return nil
            }
            while !rest.isEmpty {
                guard rest.first == "[", let close = rest.firstIndex(of: "]"),
                      let i = Int(rest[rest.index(after: rest.startIndex)..<close]),
                      let next = current[i]
                else { return nil }
                current = next
                rest = rest[rest.index(after: close)...]
            }
        }
        return current
    }

    /// True for `.null`.
    public var isNull: Bool { if case .null = self { return true } else { return false } }

    /// The string payload of `.string`, otherwise nil.
    public var stringValue: String? { if case .string(let s) = self { return s } else { return nil } }

    /// The payload of `.int`, or of `.uint`/`.double` when exactly representable as `Int64`.
    public var int64Value: Int64? {
        switch self {
        case .int(let v): return v
        case .uint(let v): return Int64(exactly: v)
        case .double(let v): return Int64(exactly: v)
        default: return nil
        }
    }

    /// The numeric payload as a `Double` for `.int`, `.uint` and `.double`.
    public var doubleValue: Double? {
        switch self {
        case .int(let v): return Double(v)
        case .uint(let v): return Double(v)
        case .double(let v): return v
        default: return nil
        }
    }

    /// The fields of `.object`, otherwise nil.
    public var fields: [Field]? { if case .object(let f) = self { return f } else { return nil } }

    /// The elements of `.array`, otherwise nil.
    public var elements: [DocumentValue]? { if case .array(let a) = self { return a } else { return nil } }
}

extension DocumentValue: ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByStringLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral {
    /// Creates `.bool`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// Creates `.int`.
    public init(integerLiteral value: Int64) { self = .int(value) }
    /// Creates `.double`.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// Creates `.string`.
    public init(stringLiteral value: String) { self = .string(value) }
    /// Creates `.array`.
    public init(arrayLiteral elements: DocumentValue...) { self = .array(elements) }
    /// Creates `.object`, keeping the literal's order.
    public init(dictionaryLiteral elements: (String, DocumentValue)...) {
        self = .object(elements.map { Field($0.0, $0.1) })
    }
}
