/// Codec errors of values that are not stored documents (a ``Persistent`` value, a
/// ``DynamicObject``), as ``DepotError``: a caller of the document layer catches `DepotError`
/// only. Each names the value and the field path, never the value itself.
extension DepotError {
    /// `error`, thrown while decoding `what` (such as `persistent value 'settings'`): a
    /// `DecodingError` as code ``Code/decodingFailed`` with its field path, a codec error of the
    /// bytes as ``Code/corruptRecord``; any other error (a `DepotError`, or one a type's own
    /// `init(from:)` threw) passes unchanged.
    package static func decoding(_ error: any Error, of what: String, collection: String? = nil, id: String?) -> any Error {
        switch error {
        case let error as DecodingError:
            let path = error.fieldPath
            return DepotError(code: .decodingFailed, message: "\(what) does not decode at '\(path.isEmpty ? "(root)" : path)': \(decodingDetail(error))",
                              collection: collection, id: id, fieldPath: path)
        case let error as BinaryCodecError:
            return DepotError(code: .corruptRecord, message: "\(what) is damaged: \(error)", collection: collection, id: id)
        default:
            return error
        }
    }

    /// `error`, thrown while encoding `what`: an `EncodingError` as code ``Code/encodingFailed``
    /// with its field path; any other error passes unchanged.
    package static func encoding(_ error: any Error, of what: String, collection: String? = nil, id: String?) -> any Error {
        guard let error = error as? EncodingError else { return error }
        let path = error.fieldPath
        return DepotError(code: .encodingFailed, message: "\(what) cannot be encoded at '\(path.isEmpty ? "(root)" : path)': \(encodingDetail(error))",
                          collection: collection, id: id, fieldPath: path)
    }
}

/// Renders a document value ID for messages.
package func displayID(_ value: DocumentValue) -> String {
    switch value {
    case .string(let s): return s
    case .int(let i): return String(i)
    case .uint(let u): return String(u)
    case .uuid(let u): return u.uuidString
    case .bytes(let b): return "0x" + b.prefix(32).map { String(format: "%02x", $0) }.joined()
    default: return "(an ID that is not a string, integer or UUID)"
    }
}

/// An encoding error described without the value that failed (messages never carry stored values).
package func encodingDetail(_ error: EncodingError) -> String {
    switch error {
    case .invalidValue(let value, let context):
        return "a value of type \(type(of: value)) cannot be encoded: \(context.debugDescription)"
    @unknown default:
        return "the value cannot be encoded"
    }
}

/// A decoding error described without the value that failed (messages never carry stored values).
package func decodingDetail(_ error: DecodingError) -> String {
    switch error {
    case .typeMismatch(let type, let c): return "expected \(type): \(c.debugDescription)"
    case .valueNotFound(let type, let c): return "missing \(type) value: \(c.debugDescription)"
    case .keyNotFound(let key, _): return "missing field '\(key.stringValue)'"
    case .dataCorrupted(let c): return c.debugDescription
    @unknown default: return "\(error)"
    }
}
