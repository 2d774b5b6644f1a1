import Foundation

/// Coding key used for elements of unkeyed containers.
struct IndexKey: CodingKey {
    let index: Int
    init(_ index: Int) { self.index = index }
    init?(intValue: Int) { self.index = intValue }
    init?(stringValue: String) { return nil }
    var intValue: Int? { index }
    var stringValue: String { "Index \(index)" }
}

/// A coding key holding an arbitrary string (used for `super` and dynamic object keys).
struct StringKey: CodingKey {
    let stringValue: String
    init(_ s: String) { stringValue = s }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { self.stringValue = String(intValue) }
    var intValue: Int? { nil }
    static let superKey = StringKey("super")
}

/// Renders a coding path as a field path such as `address.zip`, `tags[2]` or `items[0].name`.
///
/// Array element keys (keys whose `stringValue` is `"Index N"`, as produced by this codec and
/// Foundation's coders) and integer keys of dictionaries (`stringValue` `"N"`) render as `[N]`;
/// every other key renders as `.name`. The one renderer of coding paths in errors and messages.
/// - Parameter path: A `codingPath` from an error, encoder or decoder.
/// - Returns: The rendered path; an empty string for the root.
package func renderCodingPath(_ path: [any CodingKey]) -> String {
    var out = ""
    for key in path {
        if let i = key.intValue, key is IndexKey || key.stringValue == "Index \(i)" || key.stringValue == String(i) {
            out += "[\(i)]"
        } else {
            if !out.isEmpty { out += "." }
            out += key.stringValue
        }
    }
    return out
}

extension DecodingError {
    /// The coding path of the error rendered with `renderCodingPath(_:)`, e.g. `address.zip`.
    public var fieldPath: String {
        switch self {
        case .typeMismatch(_, let c), .valueNotFound(_, let c), .dataCorrupted(let c):
            return renderCodingPath(c.codingPath)
        case .keyNotFound(let key, let c):
            return renderCodingPath(c.codingPath + [key])
        @unknown default:
            return ""
        }
    }
}

extension EncodingError {
    /// The coding path of the error rendered with `renderCodingPath(_:)`.
    public var fieldPath: String {
        switch self {
        case .invalidValue(_, let c): return renderCodingPath(c.codingPath)
        @unknown default: return ""
        }
    }
}

/// Sentinel key type meaning "no key" (single-value positions); never appended to coding paths.
struct NoKey: CodingKey {
    init() {}
    init?(stringValue: String) { return nil }
    init?(intValue: Int) { return nil }
    var stringValue: String { "" }
    var intValue: Int? { nil }
}
