import Foundation

/// How JSON text spells the values JSON has no type for: dates, UUIDs, bytes and numbers that
/// are not finite.
///
/// References are `{"$ref": {"collection": C, "id": ID}}` in both styles.
public enum JSONStyle: Sendable, Hashable {
    /// Dates as ISO-8601 strings, UUIDs as strings, bytes as base64 strings, non-finite numbers
    /// as `"NaN"`, `"Infinity"` or `"-Infinity"`: what most tools read, but read back they are
    /// strings (typed `Codable` reads still decode them; indexes, comparisons and ordering see
    /// strings). Objects whose keys begin with `$` are plain objects.
    case plain
    /// Typed values as one-key objects in the form of MongoDB Extended JSON (relaxed):
    /// `{"$date": "2026-01-31T12:00:00.25Z"}` (ISO-8601 with the digits that read back exactly;
    /// `"NaN"`, `"Infinity"`, `"-Infinity"` for a date that is no point in time),
    /// `{"$uuid": "6BA7B810-9DAD-11D1-80B4-00C04FD430C8"}` (either case),
    /// `{"$binary": {"base64": "AP8A", "subType": "00"}}` and
    /// `{"$numberDouble": "NaN"}` (`"Infinity"`, `"-Infinity"`). They read back as the same
    /// `DocumentValue` cases.
    ///
    /// A stored object that would read as one of these (its only key `$date`, `$uuid`,
    /// `$binary`, `$numberDouble`, `$ref` or `$literal`) is written inside
    /// `{"$literal": {…}}`, whose object is read as it is. Reading, a one-key object with such a
    /// key that does not hold what the key needs is refused (`BinaryCodecError.rejectedJSON`
    /// naming its JSON path, never its text); objects with other keys, or more than one key,
    /// are plain objects.
    case extended
}

/// The one-key objects of ``JSONStyle/extended``.
enum ExtendedJSON {
    static let date = "$date"
    static let uuid = "$uuid"
    static let binary = "$binary"
    static let numberDouble = "$numberDouble"
    static let literal = "$literal"
    static let reference = "$ref"

    /// The keys that make a one-key object a typed value (or a reference, or a literal).
    static let keys: Set<String> = [date, uuid, binary, numberDouble, literal, reference]

    /// How many levels of JSON a typed value written under `key` has inside its own object
    /// (`{"$binary": {"base64": …}}`: 2), which do not count towards the nesting cap: a date as
    /// deep as a document may hold one reads back. 0 for other keys.
    static func innerLevels(_ key: String) -> Int {
        switch key {
        case binary: 2
        case date, uuid, numberDouble, literal: 1
        default: 0
        }
    }

    /// The levels of `value`: 1 for a scalar, one more than its deepest element or field.
    static func height(_ value: DocumentValue) -> Int {
        switch value {
        case .array(let items): 1 + (items.map(height).max() ?? 0)
        case .object(let fields): 1 + (fields.map { height($0.value) }.max() ?? 0)
        case .reference(_, let id): 1 + height(id)
        default: 1
        }
    }

    /// Whether an object of these fields reads as something else than an object in the
    /// extended style (so that writing it needs `$literal`).
    static func needsLiteral(_ fields: [DocumentValue.Field]) -> Bool {
        fields.count == 1 && keys.contains(fields[0].key)
    }

    /// The value a one-key object `{key: value}` stands for, nil when `key` is no typed
    /// value's (`$ref` and `$literal` are the parser's own), or the reason it is malformed.
    /// Reasons never contain `value`.
    static func typedValue(key: String, value: DocumentValue) -> Result<DocumentValue, Malformed>? {
        switch key {
        case date:
            guard case .string(let text) = value else { return .failure(Malformed("\"$date\" must hold an ISO-8601 date as a string (\"2026-01-31T12:00:00Z\")")) }
            if let special = nonFinite(text) { return .success(.date(Date(timeIntervalSinceReferenceDate: special))) }
            guard let parsed = DocumentValue.parseISO8601(text) else {
                return .failure(Malformed("\"$date\" holds no ISO-8601 date (\"2026-01-31T12:00:00Z\", with a zone)"))
            }
            return .success(.date(parsed))
        case uuid:
            guard case .string(let text) = value, let parsed = UUID(uuidString: text) else {
                return .failure(Malformed("\"$uuid\" must hold a UUID as a string (\"6BA7B810-9DAD-11D1-80B4-00C04FD430C8\")"))
            }
            return .success(.uuid(parsed))
        case binary:
            let shape = "\"$binary\" must be {\"base64\": \"…\", \"subType\": \"00\"}"
            guard case .object(let fields) = value, fields.count == 2,
                  case .string(let base64)? = value["base64"], case .string(let subType)? = value["subType"] else {
                return .failure(Malformed(shape))
            }
            guard subType == "00" || subType == "0" else {
                return .failure(Malformed(shape + ": Depot stores generic bytes only (subType \"00\")"))
            }
            guard let bytes = Data(base64Encoded: base64) else { return .failure(Malformed("\"$binary\" holds no base64 text")) }
            return .success(.bytes([UInt8](bytes)))
        case numberDouble:
            guard case .string(let text) = value else {
                return .failure(Malformed("\"$numberDouble\" must hold a number as a string (\"NaN\", \"Infinity\", \"-Infinity\", \"1.5\")"))
            }
            if let special = nonFinite(text) { return .success(.double(special)) }
            // A number as JSON writes it (no hexadecimal, no "inf"), finite, and not a non-zero
            // one that a Double holds as 0.
            let mantissa = text.utf8.prefix { $0 != UInt8(ascii: "e") && $0 != UInt8(ascii: "E") }
            guard JSONParser.isWellFormed(text), let number = Double(text), number.isFinite,
                  number != 0 || !mantissa.contains(where: { (49...57).contains($0) }) else {
                return .failure(Malformed("\"$numberDouble\" holds no number a Double holds (\"NaN\", \"Infinity\", \"-Infinity\", \"1.5\")"))
            }
            return .success(.double(number))
        default:
            return nil
        }
    }

    /// Why a one-key object does not read as the typed value its key names.
    struct Malformed: Error {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    /// The number a non-finite word stands for (`"NaN"`, `"Infinity"`, `"-Infinity"`).
    static func nonFinite(_ text: String) -> Double? {
        switch text {
        case "NaN": return .nan
        case "Infinity": return .infinity
        case "-Infinity": return -.infinity
        default: return nil
        }
    }
}
