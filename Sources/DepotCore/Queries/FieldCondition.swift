import Foundation

/// A comparison of one field with a value: the part of a query that an index can serve.
public struct FieldCondition: Sendable, Hashable, CustomStringConvertible {
    /// The comparison.
    public enum Operator: String, Sendable, Hashable, CaseIterable {
        case equal = "=="
        case notEqual = "!="
        case less = "<"
        case lessOrEqual = "<="
        case greater = ">"
        case greaterOrEqual = ">="
        case prefix = "prefix"
    }

    /// The field path, such as `salary` or `address.zip`.
    public var field: String
    /// The comparison.
    public var op: Operator
    /// The value compared with.
    public var value: DocumentValue

    /// Creates a condition on a field path.
    public init(field: String, op: Operator, value: DocumentValue) {
        self.field = field
        self.op = op
        self.value = value
    }

    public var description: String { "\(field) \(op.rawValue) \(value)" }

    /// Whether `candidate` (the field's value, nil when absent) satisfies the condition.
    ///
    /// An array field compared with a value that is not an array is equal when one of its
    /// elements is (`skills == "Swift"` matches `["Go", "Swift"]`), and not equal when none is;
    /// an array compared with an array is equal when both hold equal elements in order.
    package func matches(_ candidate: DocumentValue?) -> Bool {
        let actual = candidate ?? .null
        switch op {
        case .prefix:
            guard case .string(let s) = actual, case .string(let p) = value else { return false }
            return s.unicodeScalars.starts(with: p.unicodeScalars)
        case .equal:
            return isEqual(actual)
        case .notEqual:
            return !isEqual(actual)
        default:
            guard let order = Self.compare(actual, value) else { return false }
            switch op {
            case .less: return order == .orderedAscending
            case .lessOrEqual: return order != .orderedDescending
            case .greater: return order == .orderedDescending
            case .greaterOrEqual: return order != .orderedAscending
            default: return false
            }
        }
    }

    /// `==`: equal, or (an array field and a value that is not one) holding an equal element.
    private func isEqual(_ actual: DocumentValue) -> Bool {
        if case .array(let elements) = actual {
            if case .array = value {} else {
                return elements.contains { Self.compare($0, value) == .orderedSame }
            }
        }
        return Self.compare(actual, value) == .orderedSame
    }

    static func compare(_ a: DocumentValue, _ b: DocumentValue) -> ComparisonResult? {
        if case .null = a, case .null = b { return .orderedSame }
        if case .null = a { return nil }
        if case .null = b { return nil }
        return DocumentValue.compare(a, b)
    }
}

/// Typed condition builders: `.where(\.salary, .greaterThan(100))`.
public struct Comparison<V: IndexableValue>: Sendable {
    let op: FieldCondition.Operator
    let value: DocumentValue

    /// Equal to `v`.
    public static func equalTo(_ v: V) -> Comparison { .init(op: .equal, value: v.indexValue) }
    /// Not equal to `v`.
    public static func notEqualTo(_ v: V) -> Comparison { .init(op: .notEqual, value: v.indexValue) }
    /// Less than `v`.
    public static func lessThan(_ v: V) -> Comparison { .init(op: .less, value: v.indexValue) }
    /// Less than or equal to `v`.
    public static func atMost(_ v: V) -> Comparison { .init(op: .lessOrEqual, value: v.indexValue) }
    /// Greater than `v`.
    public static func greaterThan(_ v: V) -> Comparison { .init(op: .greater, value: v.indexValue) }
    /// Greater than or equal to `v`.
    public static func atLeast(_ v: V) -> Comparison { .init(op: .greaterOrEqual, value: v.indexValue) }
}

extension Comparison where V == String {
    /// Strings starting with `prefix`.
    public static func hasPrefix(_ prefix: String) -> Comparison { .init(op: .prefix, value: .string(prefix)) }
}

extension FieldCondition {
    /// A condition from the three words of a command line, `FIELD OP VALUE` (`depot query
    /// --where salary '>' 100`): OP is one of the ``Operator`` raw values; VALUE is read as a JSON
    /// scalar when it parses (`42`, `true`, `"text"`, a typed value such as
    /// `{"$date": "2026-01-31T00:00:00Z"}`), else as text; a JSON array or object is
    /// refused (a condition compares one value; an array field matches by its elements). JSON
    /// that Depot's strict reader refuses (`1e999`, a 30-digit integer) is an error, not silently text.
    ///
    /// - Throws: `DepotError` with code `DepotError.Code/invalidQuery` naming the word at fault.
    package init(field: String, operator op: String, text: String) throws {
        guard !field.isEmpty else { throw DepotError.invalidQuery("--where: the field is empty") }
        guard let parsed = Operator(rawValue: op) else {
            throw DepotError.invalidQuery("--where \(field) \(op) …: unknown operator '\(op)'; use one of \(Operator.allCases.map(\.rawValue).joined(separator: " "))")
        }
        let value = try Self.commandLineValue(text)
        switch value {
        case .array, .object:
            // Never the text itself (nothing would match, silently): a condition compares one value.
            let kind = if case .array = value { "an array" } else { "an object" }
            throw DepotError.invalidQuery("--where \(field) \(op) …: the value is \(kind); a condition compares one value, and an array field matches when one of its elements does (--where \(field) == ELEMENT); to compare with the text itself, write it as a JSON string (\"…\")")
        default: break
        }
        if parsed == .prefix, case .string = value {} else if parsed == .prefix {
            throw DepotError.invalidQuery("--where \(field) prefix …: the value must be text")
        }
        self.init(field: field, op: parsed, value: value)
    }

    /// VALUE of a command-line condition: JSON when it parses (an array or object is refused by
    /// the caller), typed values in the extended style (`{"$date": "2026-01-31T00:00:00Z"}`,
    /// `{"$uuid": …}`, as `depot export` writes them), else the text itself.
    package static func commandLineValue(_ text: String) throws -> DocumentValue {
        do {
            return try DocumentValue(jsonString: text, style: .extended)
        } catch let error as BinaryCodecError {
            if case .rejectedJSON = error { throw DepotError.invalidQuery("--where value: \(error)") }
            return .string(text)
        }
    }
}
