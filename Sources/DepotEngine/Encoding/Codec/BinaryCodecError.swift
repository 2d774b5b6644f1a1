import Foundation

/// Errors thrown by the Depot binary codec and by `DocumentValue` conversions.
///
/// Type mismatches, missing keys and out-of-range numbers met while decoding a `Decodable`
/// type are reported as `DecodingError` (with a `codingPath`); `BinaryCodecError` covers structural
/// problems of the input itself.
public enum BinaryCodecError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The input contained no bytes.
    case emptyInput
    /// The first byte names a format version this codec does not understand.
    case unsupportedVersion(UInt8)
    /// The input ended before a complete value could be read.
    case truncated(offset: Int)
    /// The input is structurally invalid at `offset`.
    case malformed(offset: Int, reason: String)
    /// Values are nested deeper than `limit` levels.
    case nestingTooDeep(limit: Int)
    /// The input is larger than the format supports (4 GiB).
    case inputTooLarge(Int)
    /// JSON text could not be parsed.
    case invalidJSON(offset: Int, reason: String)
    /// A non-finite `Double` (infinity or NaN) cannot be written as JSON. (No longer thrown by
    /// the JSON writer, which writes such numbers as strings; kept for source compatibility.)
    case nonFiniteNumberInJSON(Double)
    /// Well-formed JSON that Depot refuses because it cannot be stored exactly: a key repeated
    /// in one object, a number beyond `Double`'s range (it would become infinity) or below it
    /// (a non-zero number that would become 0), an integer beyond 64 bits. `path` is the JSON
    /// path of the value (`$.employees[2].id`); the message never contains the value itself.
    case rejectedJSON(offset: Int, path: String, reason: String)

    /// A human-readable description of the error.
    public var description: String {
        switch self {
        case .emptyInput: return "Empty input"
        case .unsupportedVersion(let v): return "Unsupported binary format version \(v) (expected \(BinaryFormat.version))"
        case .truncated(let o): return "Input truncated at offset \(o)"
        case .malformed(let o, let r): return "Malformed input at offset \(o): \(r)"
        case .nestingTooDeep(let l): return "Values are nested deeper than \(l) levels"
        case .inputTooLarge(let n): return "Input of \(n) bytes exceeds the 4 GiB limit"
        case .invalidJSON(let o, let r): return "Invalid JSON at offset \(o): \(r)"
        case .nonFiniteNumberInJSON(let d): return "Cannot represent non-finite number \(d) in JSON"
        case .rejectedJSON(let o, let path, let r): return "Invalid JSON at \(path) (offset \(o)): \(r)"
        }
    }
}

extension BinaryCodecError: LocalizedError {
    /// The ``description``.
    public var errorDescription: String? { description }
}
