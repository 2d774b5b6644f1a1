import Depot

/// The ID kind each collection new to the store gets in an import: from all of its IDs in the
/// input (in one batch with `--batch`), not from the first one alone.
///
/// Export's JSON loses the Swift type of an ID, and one ID alone can mislead: a collection of
/// strings whose first ID happens to be an upper-case UUID, or of unsigned integers whose first
/// ID is small. Deciding by the first ID made such exports fail to import, or (upper- and
/// lower-case UUID strings of one string collection) merge two documents into one. So the kinds
/// of all the IDs are combined: integers are signed unless one is past `Int64.max` (unsigned,
/// with no negative one); strings are UUIDs (or content hashes) only when every one is; IDs of
/// two families (integers and strings) in one collection are refused before anything is stored.
struct ImportedIDKinds {
    private struct Seen {
        var kind: IDKind
        var line: Int
        /// The first line with a negative integer ID.
        var negativeLine: Int?
        /// The kind a line names (`"idKind"`), and the first line naming it.
        var declared: (kind: IDKind, line: Int)?
    }

    private var seen: [String: Seen] = [:]

    /// The kinds of `lines`' collections.
    init(_ lines: [ImportedLine]) throws {
        for line in lines { try add(line) }
    }

    /// The kind for `collection` (nil: no ID of it was seen): the one its lines name, else the
    /// one its IDs make.
    subscript(collection: String) -> IDKind? { seen[collection].map { $0.declared?.kind ?? $0.kind } }

    private mutating func add(_ line: ImportedLine) throws {
        // ImportedLine checked that each ID has a kind.
        guard let kind = DocumentTransaction.inferredIDKind(id: line.id, document: line.document) else { return }
        let negative: Int? = if case .int(let value) = line.id, value < 0 { line.line } else { nil }
        let declared = line.declaredKind.map { (kind: $0, line: line.line) }
        guard var known = seen[line.collection] else {
            seen[line.collection] = Seen(kind: kind, line: line.line, negativeLine: negative, declared: declared)
            return
        }
        if let declared {
            if let earlier = known.declared, earlier.kind != declared.kind {
                throw ImportError(.invalidLine, line: line.line, jsonPath: "$.idKind",
                                  detail: "collection '\(line.collection)' is named \(earlier.kind.rawValue) (line \(earlier.line)) and here \(declared.kind.rawValue): a collection has one ID kind")
            }
            known.declared = known.declared ?? declared
        }
        known.negativeLine = known.negativeLine ?? negative
        guard let combined = Self.combine(known.kind, kind) else {
            throw ImportError(.invalidLine, line: line.line, jsonPath: "$.id",
                              detail: "collection '\(line.collection)' has \(Self.family(known.kind)) IDs (line \(known.line)) and here \(Self.family(kind)) one: a collection has one ID kind")
        }
        if combined == .unsigned, let negativeLine = known.negativeLine {
            throw ImportError(.invalidLine, line: line.line, jsonPath: "$.id",
                              detail: "collection '\(line.collection)' has a negative ID (line \(negativeLine)) and one past the largest signed 64-bit integer: no integer ID kind holds both")
        }
        known.kind = combined
        seen[line.collection] = known
    }

    /// The kind that holds IDs of kinds `a` and `b`, or nil when none does.
    static func combine(_ a: IDKind, _ b: IDKind) -> IDKind? {
        if a == b { return a }
        switch (family(a), family(b)) {
        case ("integer", "integer"): return .unsigned // one of them is unsigned
        case ("string", "string"): return .string // UUID or hash beside other text
        default: return nil
        }
    }

    /// "integer" or "string": the JSON type behind a kind.
    static func family(_ kind: IDKind) -> String {
        switch kind {
        case .signed, .unsigned: "integer"
        default: "string"
        }
    }
}
