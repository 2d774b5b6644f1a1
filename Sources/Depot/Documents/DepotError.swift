import DepotLMDB
import Foundation

/// Errors of the document layer. Each names what was wrong and where (alias, collection, ID,
/// field path); none contains a stored value.
public enum DepotError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stored record failed its checksum: the bytes changed on disk or in memory.
    case checksumMismatch(alias: String, collection: String, id: String)
    /// A stored record could not be read (unknown format version, truncated header, …).
    case corruptRecord(alias: String, collection: String, id: String, detail: String)
    /// A stored document does not decode as the requested type.
    case decodingFailed(alias: String, collection: String, id: String, fieldPath: String, detail: String)
    /// A document could not be encoded.
    case encodingFailed(collection: String, id: String, fieldPath: String, detail: String)
    /// A parent references a child document that is not stored.
    case danglingReference(parentCollection: String, parentID: String, childCollection: String, childID: String)
    /// Resolving references came back to a document already being resolved.
    case referenceCycle(chain: [String])
    /// A reference names a collection whose type is not known where it is read.
    case unknownReferenceType(collection: String, expected: String)
    /// A collection holds IDs of another kind than the type asks for.
    case idKindMismatch(alias: String, collection: String, stored: IDKind, requested: IDKind)
    /// An ID cannot be used as a key (empty string, over 511 bytes, …).
    case invalidKey(detail: String)
    /// A store alias name is not acceptable.
    case invalidAliasName(String, detail: String)
    /// The alias does not exist (for operations that need an existing one).
    case unknownAlias(String)
    /// The collection name is not acceptable.
    case invalidCollectionName(String, detail: String)
    /// The store was closed.
    case storeClosed(path: String)
    /// A conditional write found another revision than expected.
    case revisionConflict(alias: String, collection: String, id: String, expected: UInt64, actual: UInt64?)
    /// A unit-of-work or explicit-transaction method was used in the wrong state.
    case invalidState(String)
    /// Parking would give two documents the same value in a unique index (the value itself is
    /// not repeated in the message).
    case uniqueIndexViolation(alias: String, collection: String, index: String, id: String, conflictingID: String)
    /// No fetch request of that name is registered.
    case unknownFetchRequest(String)
    /// A registered fetch request was executed as another document type.
    case fetchRequestTypeMismatch(name: String, registered: String, requested: String)
    /// A substitution variable of a fetch request was not given.
    case missingSubstitution(request: String, variable: String)
    /// A substitution variable has a value of the wrong type.
    case mistypedSubstitution(request: String, variable: String, expected: String, actual: String)

    public var description: String {
        switch self {
        case let .checksumMismatch(alias, collection, id):
            return "record \(collection)/\(id) in alias '\(alias)' failed its checksum: the stored bytes are damaged"
        case let .corruptRecord(alias, collection, id, detail):
            return "record \(collection)/\(id) in alias '\(alias)' is damaged: \(detail)"
        case let .decodingFailed(alias, collection, id, path, detail):
            return "document \(collection)/\(id) in alias '\(alias)' does not decode at '\(path.isEmpty ? "(root)" : path)': \(detail)"
        case let .encodingFailed(collection, id, path, detail):
            return "document \(collection)/\(id) cannot be encoded at '\(path.isEmpty ? "(root)" : path)': \(detail)"
        case let .danglingReference(pc, pid, cc, cid):
            return "\(pc)/\(pid) references \(cc)/\(cid), which is not stored"
        case let .referenceCycle(chain):
            return "reference cycle: " + chain.joined(separator: " → ")
        case let .unknownReferenceType(collection, expected):
            return "a reference to collection '\(collection)' cannot be read as \(expected)"
        case let .idKindMismatch(alias, collection, stored, requested):
            return "collection '\(collection)' in alias '\(alias)' has \(stored.rawValue) IDs, not \(requested.rawValue)"
        case let .invalidKey(detail):
            return "invalid key: \(detail)"
        case let .invalidAliasName(name, detail):
            return "invalid alias name '\(name)': \(detail)"
        case let .unknownAlias(name):
            return "no alias named '\(name)'"
        case let .invalidCollectionName(name, detail):
            return "invalid collection name '\(name)': \(detail)"
        case let .storeClosed(path):
            return "the store at '\(path)' is closed"
        case let .revisionConflict(alias, collection, id, expected, actual):
            return "conditional write of \(collection)/\(id) in alias '\(alias)' expected revision \(expected), found \(actual.map(String.init) ?? "no record")"
        case let .invalidState(detail):
            return detail
        case let .uniqueIndexViolation(alias, collection, index, id, other):
            return "unique index '\(index)' of \(collection) in alias '\(alias)': \(collection)/\(id) has the same value as \(collection)/\(other)"
        case let .unknownFetchRequest(name):
            return "no fetch request named '\(name)' is registered"
        case let .fetchRequestTypeMismatch(name, registered, requested):
            return "fetch request '\(name)' fetches \(registered), not \(requested)"
        case let .missingSubstitution(request, variable):
            return "fetch request '\(request)' needs a value for '\(variable)'"
        case let .mistypedSubstitution(request, variable, expected, actual):
            return "fetch request '\(request)': '\(variable)' must be \(expected), got \(actual)"
        }
    }
}

/// Renders a document value ID for messages.
func displayID(_ value: DocumentValue) -> String {
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
func encodingDetail(_ error: EncodingError) -> String {
    switch error {
    case .invalidValue(let value, let context):
        return "a value of type \(type(of: value)) cannot be encoded: \(context.debugDescription)"
    @unknown default:
        return "the value cannot be encoded"
    }
}
