import Depot
import Foundation

/// How `depot doc` turns `--id` text and a document body into the ID and body the library reads
/// back: written once for put, get and delete.
///
/// - An ID keeps its text (`00123` is the string "00123") unless the collection's recorded ID
///   kind is numeric (then the text must be an integer) or a UUID (then it must be one).
/// - A body without its identifying attribute (`id`, or `<collection>ID`) gets `id` filled in,
///   so that the Swift type whose `id` it is decodes it.
/// - A body whose identifying attribute disagrees with `--id` is refused, and so is an ID of
///   another kind than the collection's: a collection's ID kind never changes.
enum DocumentIDRules {
    /// A document ready to store: its ID and its body (with the ID filled in).
    struct Resolved {
        var id: DocumentValue
        var document: DocumentValue
    }

    /// The ID `text` names in a collection of `kind` (nil: a new collection, where text stays text).
    /// - Throws: ``CLIFailure`` (`idKindMismatch`) when the text cannot be an ID of that kind.
    static func id(_ text: String, kind: IDKind?, collection: String) throws -> DocumentValue {
        switch kind {
        case .signed?:
            guard let value = Int64(text) else {
                let reason = Self.isInteger(text) ? "is out of the collection's integer range (\(Int64.min) to \(Int64.max))" : "is not an integer"
                throw mismatch(collection, kind: .signed, id: "--id '\(text)' \(reason)")
            }
            return .int(value)
        case .unsigned?:
            guard let value = UInt64(text) else {
                let reason = Self.isInteger(text) && !text.hasPrefix("-") ? "is out of the collection's integer range (0 to \(UInt64.max))"
                    : "is not an integer of 0 or more"
                throw mismatch(collection, kind: .unsigned, id: "--id '\(text)' \(reason)")
            }
            return .uint(value)
        case .uuid?:
            guard let value = UUID(uuidString: text) else { throw mismatch(collection, kind: .uuid, id: "--id '\(text)' is not a UUID") }
            return .uuid(value)
        case .string?, .content?, nil:
            return .string(text)
        }
    }

    /// Whether `text` is written as an integer (an optional sign and decimal digits), whatever its size.
    private static func isInteger(_ text: String) -> Bool {
        let digits = text.hasPrefix("-") || text.hasPrefix("+") ? text.dropFirst() : Substring(text)
        return !digits.isEmpty && digits.allSatisfy { $0.isASCII && $0.isNumber }
    }

    /// The ID and body `doc put` stores for `body` (a JSON object), `--id` text (if given), in
    /// `collection` whose recorded ID kind is `kind` (nil when new).
    /// - Throws: ``CLIFailure`` naming the collection and what disagrees.
    static func resolve(body: DocumentValue, idText: String?, kind: IDKind?, collection: String) throws -> Resolved {
        let fields = body.fields ?? []
        let identifying = DynamicObject(entity: collection, fields: fields.map { ($0.key, $0.value) })
        let bodyID = identifying.id
        if let bodyID {
            let bodyKind = try self.kind(of: bodyID, field: identifying.idField, collection: collection)
            if let kind, !compatible(bodyKind, kind) {
                throw mismatch(collection, kind: kind, id: "the document's '\(identifying.idField)' is a \(bodyKind.rawValue) ID")
            }
            if let idText {
                let typed = try id(idText, kind: kind ?? (bodyKind == .string ? nil : bodyKind), collection: collection)
                guard same(typed, bodyID) else {
                    throw CLIFailure(code: "idMismatch", message: "--id '\(idText)' differs from the document's '\(identifying.idField)' field; give the same ID in both, or leave one out")
                }
            }
            return Resolved(id: bodyID, document: body)
        }
        guard let idText else {
            throw CLIFailure(code: "missingID", message: "give --id ID, or an 'id' (or '\(identifying.idField)') field in the document")
        }
        let typed = try id(idText, kind: kind, collection: collection)
        // `id` first, as export prints it and as the Swift type names it.
        return Resolved(id: typed, document: .object([DocumentValue.Field("id", typed)] + fields))
    }

    /// The kind of a body's identifying value.
    private static func kind(of value: DocumentValue, field: String, collection: String) throws -> IDKind {
        switch value {
        case .string: return .string
        case .int: return .signed
        case .uint(let u): return u > UInt64(Int64.max) ? .unsigned : .signed
        case .uuid: return .uuid
        default:
            throw CLIFailure(code: "invalidKey", message: "the document's '\(field)' field must be a string, an integer or a UUID to identify a \(collection) document")
        }
    }

    /// Whether an ID of kind `given` can key a collection of kind `stored` without changing it.
    private static func compatible(_ given: IDKind, _ stored: IDKind) -> Bool {
        switch (given, stored) {
        case (.signed, .unsigned), (.unsigned, .signed): return true // the value is checked when keyed
        case (.string, .uuid), (.string, .content): return true // UUID text, content hashes
        default: return given == stored
        }
    }

    /// Whether two IDs name the same document (integers by value, strings by text).
    static func same(_ a: DocumentValue, _ b: DocumentValue) -> Bool {
        switch (a, b) {
        case (.int(let x), .uint(let y)), (.uint(let y), .int(let x)): return x >= 0 && UInt64(x) == y
        case (.uuid(let u), .string(let s)), (.string(let s), .uuid(let u)): return UUID(uuidString: s) == u
        default: return a == b
        }
    }

    /// Whether two strings spell one UUID (in two cases): one ID in a UUID collection only,
    /// where 'doc put' takes either and export writes the key in upper case beside the
    /// document's own spelling.
    static func sameUUID(_ a: DocumentValue, _ b: DocumentValue) -> Bool {
        guard case .string(let x) = a, case .string(let y) = b, x.utf8.count == 36, y.utf8.count == 36,
              let u = UUID(uuidString: x), let v = UUID(uuidString: y) else { return false }
        return u == v
    }

    private static func mismatch(_ collection: String, kind: IDKind, id detail: String) -> CLIFailure {
        CLIFailure(code: "idKindMismatch",
                   message: "collection '\(collection)' has \(kind.rawValue) IDs, and \(detail); a collection's ID kind never changes")
    }
}
