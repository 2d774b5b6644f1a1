import Foundation

/// An error of the document layer: a ``code`` to match on, and where it happened (alias,
/// collection, ID, field path) — never a stored value.
///
/// Match on the code the way GRDB matches `DatabaseError` and Depot matches `LMDBError`:
///
/// ```swift
/// do {
///     try store.write { tx in try tx.park(employee, ifRevision: 3) }
/// } catch DepotError.revisionConflict {
///     // someone else changed it: reload and retry
/// } catch let error as DepotError where error.code == .uniqueIndexViolation {
///     print(error.collection ?? "", error.localizedDescription)
/// }
/// ```
///
/// It is the one error type a caller of the document layer catches: the storage driver's errors
/// come as code ``Code/storage`` with the driver's error as ``underlyingError`` (and the driver's
/// own patterns, such as `catch LMDBError.mapFull`, still match them); a seed import that fails
/// comes as code ``Code/seedFailed`` with its ``seedProblem``, ``file`` and JSON path
/// (``fieldPath``).
///
/// `DepotError` conforms to `LocalizedError` and `CustomNSError`, so `localizedDescription` and an
/// `NSError`'s user info (`DepotErrorAlias`, `DepotErrorCollection`, `DepotErrorID`,
/// `DepotErrorFieldPath`, `DepotErrorFile`, `DepotErrorSeedProblem`) name what failed.
public struct DepotError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The code's stable name, such as `"checksumMismatch"`.
        public let rawValue: String
        /// A code from its name.
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// A stored record failed its checksum: the bytes changed on disk or in memory.
        public static let checksumMismatch = Code(rawValue: "checksumMismatch")
        /// A stored record could not be read (unknown format version, truncated header, …).
        public static let corruptRecord = Code(rawValue: "corruptRecord")
        /// A stored document does not decode as the requested type.
        public static let decodingFailed = Code(rawValue: "decodingFailed")
        /// A document could not be encoded.
        public static let encodingFailed = Code(rawValue: "encodingFailed")
        /// A parent references a child document that is not stored.
        public static let danglingReference = Code(rawValue: "danglingReference")
        /// Resolving references came back to a document already being resolved.
        public static let referenceCycle = Code(rawValue: "referenceCycle")
        /// A reference names a collection whose type is not known where it is read.
        public static let unknownReferenceType = Code(rawValue: "unknownReferenceType")
        /// A collection holds IDs of another kind than the type asks for.
        public static let idKindMismatch = Code(rawValue: "idKindMismatch")
        /// An ID cannot be used as a key (empty, longer than the storage's limit, …).
        public static let invalidKey = Code(rawValue: "invalidKey")
        /// A store alias name is not acceptable.
        public static let invalidAliasName = Code(rawValue: "invalidAliasName")
        /// A collection name is not acceptable.
        public static let invalidCollectionName = Code(rawValue: "invalidCollectionName")
        /// A conditional write found another revision than expected.
        public static let revisionConflict = Code(rawValue: "revisionConflict")
        /// A write was attempted in a read-only transaction.
        public static let readOnlyTransaction = Code(rawValue: "readOnlyTransaction")
        /// An index declaration cannot be kept (duplicate name, field path that does not hold
        /// the key path's value).
        public static let invalidIndex = Code(rawValue: "invalidIndex")
        /// A record could not be passed through the store's ``RecordTransform`` (wrong key, damage).
        public static let transformFailed = Code(rawValue: "transformFailed")
        /// A record is sealed by a ``RecordTransform`` (encrypted) and the store was opened
        /// without one: it needs the key, and is not damaged.
        public static let transformRequired = Code(rawValue: "transformRequired")
        /// A second handle on a store open in this process gave another record transform (or
        /// none where the first had one, or one where it had none): the handles of one store
        /// in one process share one transform.
        public static let transformMismatch = Code(rawValue: "transformMismatch")
        /// A delete was refused by a ``DeleteRule/deny`` rule: other documents still reference it.
        public static let deleteDenied = Code(rawValue: "deleteDenied")
        /// A collection was written by a newer version of its document type than the one reading it.
        public static let newerVersion = Code(rawValue: "newerVersion")
        /// Undo or redo found a record changed since the step (nothing was written).
        public static let undoConflict = Code(rawValue: "undoConflict")
        /// Two documents would share a value in a unique index.
        public static let uniqueIndexViolation = Code(rawValue: "uniqueIndexViolation")
        /// No fetch request of that name is registered.
        public static let unknownFetchRequest = Code(rawValue: "unknownFetchRequest")
        /// A registered fetch request was executed as another document type.
        public static let fetchRequestTypeMismatch = Code(rawValue: "fetchRequestTypeMismatch")
        /// A substitution variable of a fetch request was not given.
        public static let missingSubstitution = Code(rawValue: "missingSubstitution")
        /// A substitution variable has a value of the wrong type, or was not declared.
        public static let mistypedSubstitution = Code(rawValue: "mistypedSubstitution")
        /// The store-level `delete` or `setSyncStatus` named a document that is not stored
        /// (GarageStorage's `failedToRetrieveObject`).
        public static let notStored = Code(rawValue: "notStored")
        /// An option was given outside its allowed range (the message names the option and the
        /// range; see the article "Options and their ranges").
        public static let invalidOption = Code(rawValue: "invalidOption")

        /// A migration name was registered twice with one ``Migrator``.
        public static let duplicateMigration = Code(rawValue: "duplicateMigration")

        package static let all: [Code] = [
            .checksumMismatch, .corruptRecord, .decodingFailed, .encodingFailed, .danglingReference, .referenceCycle,
            .unknownReferenceType, .idKindMismatch, .invalidKey, .invalidAliasName, .invalidCollectionName,
            .revisionConflict, .readOnlyTransaction, .invalidIndex, .uniqueIndexViolation, .undoConflict, .newerVersion, .deleteDenied, .transformFailed, .transformRequired, .transformMismatch,
            .unknownFetchRequest, .fetchRequestTypeMismatch, .missingSubstitution, .mistypedSubstitution, .notStored, .invalidOption, .duplicateMigration,
            .unsupported, .transactionMisuse, .storageInconsistent, .invalidQuery, .invalidDeleteRule, .ownerReleased,
            .exhausted, .documentTypeMismatch, .invalidDocument, .migrationConflict, .storage, .seedFailed,
        ]
    }

    /// What failed.
    public let code: Code
    /// The alias involved, if any.
    public let alias: String?
    /// The collection involved, if any.
    public let collection: String?
    /// The document's ID as text (never its content), if any.
    public let id: String?
    /// The field path inside the document (`address.zip`, `tags[2]`), or for a seed file the JSON
    /// path (`$.Company[1].employees`), if any.
    public let fieldPath: String?
    /// The file (relative to the seed folder) or URL that failed, for code ``Code/seedFailed``.
    public let file: String?
    /// What was wrong with the seed tree, for code ``Code/seedFailed``.
    public let seedProblem: SeedProblem?
    /// The whole message.
    public let message: String
    /// The lower layer's error (see ``underlyingError``).
    package let underlying: UnderlyingError?

    /// An error with a code and its context; `message` is the text users see.
    public init(code: Code, message: String, alias: String? = nil, collection: String? = nil, id: String? = nil, fieldPath: String? = nil) {
        self.init(code: code, message: message, alias: alias, collection: collection, id: id, fieldPath: fieldPath, underlying: nil)
    }

    package init(code: Code, message: String, alias: String? = nil, collection: String? = nil, id: String? = nil, fieldPath: String? = nil,
         file: String? = nil, seedProblem: SeedProblem? = nil, underlying: UnderlyingError?) {
        self.code = code
        self.message = message
        self.alias = alias
        self.collection = collection
        self.id = id
        self.fieldPath = fieldPath
        self.file = file
        self.seedProblem = seedProblem
        self.underlying = underlying
    }

    /// A pattern that matches any error with `code` (for `catch DepotError.revisionConflict`).
    package init(pattern code: Code) { self.init(code: code, message: code.rawValue) }

    public var description: String { message }

    /// Lets `catch DepotError.checksumMismatch` match any ``DepotError`` with that code.
    public static func ~= (pattern: DepotError, value: any Error) -> Bool {
        (value as? DepotError)?.code == pattern.code
    }
}

extension DepotError {
    // Patterns (code only), one per code, for `catch DepotError.<code>`.
    /// Matches ``Code/checksumMismatch``.
    public static let checksumMismatch = DepotError(pattern: .checksumMismatch)
    /// Matches ``Code/corruptRecord``.
    public static let corruptRecord = DepotError(pattern: .corruptRecord)
    /// Matches ``Code/decodingFailed``.
    public static let decodingFailed = DepotError(pattern: .decodingFailed)
    /// Matches ``Code/encodingFailed``.
    public static let encodingFailed = DepotError(pattern: .encodingFailed)
    /// Matches ``Code/danglingReference``.
    public static let danglingReference = DepotError(pattern: .danglingReference)
    /// Matches ``Code/referenceCycle``.
    public static let referenceCycle = DepotError(pattern: .referenceCycle)
    /// Matches ``Code/idKindMismatch``.
    public static let idKindMismatch = DepotError(pattern: .idKindMismatch)
    /// Matches ``Code/invalidKey``.
    public static let invalidKey = DepotError(pattern: .invalidKey)
    /// Matches ``Code/revisionConflict``.
    public static let revisionConflict = DepotError(pattern: .revisionConflict)
    /// Matches ``Code/readOnlyTransaction``.
    public static let readOnlyTransaction = DepotError(pattern: .readOnlyTransaction)
    /// Matches ``Code/invalidIndex``.
    public static let invalidIndex = DepotError(pattern: .invalidIndex)
    /// Matches ``Code/transformFailed``.
    public static let transformFailed = DepotError(pattern: .transformFailed)
    /// Matches ``Code/transformRequired``.
    public static let transformRequired = DepotError(pattern: .transformRequired)
    /// Matches ``Code/transformMismatch``.
    public static let transformMismatch = DepotError(pattern: .transformMismatch)
    /// Matches ``Code/deleteDenied``.
    public static let deleteDenied = DepotError(pattern: .deleteDenied)
    /// Matches ``Code/newerVersion``.
    public static let newerVersion = DepotError(pattern: .newerVersion)
    /// Matches ``Code/undoConflict``.
    public static let undoConflict = DepotError(pattern: .undoConflict)
    /// Matches ``Code/uniqueIndexViolation``.
    public static let uniqueIndexViolation = DepotError(pattern: .uniqueIndexViolation)
    /// Matches ``Code/missingSubstitution``.
    public static let missingSubstitution = DepotError(pattern: .missingSubstitution)
    /// Matches ``Code/mistypedSubstitution``.
    public static let mistypedSubstitution = DepotError(pattern: .mistypedSubstitution)
    /// Matches ``Code/notStored``.
    public static let notStored = DepotError(pattern: .notStored)
    /// Matches ``Code/invalidOption``.
    public static let invalidOption = DepotError(pattern: .invalidOption)
    /// Matches ``Code/duplicateMigration``.
    public static let duplicateMigration = DepotError(pattern: .duplicateMigration)

    // Constructors, one per failure.
    /// An error with code ``Code/checksumMismatch`` and its message.
    package static func checksumMismatch(alias: String, collection: String, id: String) -> DepotError {
        DepotError(code: .checksumMismatch, message: "record \(collection)/\(id) in alias '\(alias)' failed its checksum: the stored bytes are damaged",
                   alias: alias, collection: collection, id: id)
    }
    /// An error with code ``Code/corruptRecord`` and its message.
    package static func corruptRecord(alias: String, collection: String, id: String, detail: String) -> DepotError {
        DepotError(code: .corruptRecord, message: "record \(collection)/\(id) in alias '\(alias)' is damaged: \(detail)",
                   alias: alias, collection: collection, id: id)
    }
    /// An error with code ``Code/decodingFailed`` and its message.
    package static func decodingFailed(alias: String, collection: String, id: String, fieldPath: String, detail: String) -> DepotError {
        DepotError(code: .decodingFailed,
                   message: "document \(collection)/\(id) in alias '\(alias)' does not decode at '\(fieldPath.isEmpty ? "(root)" : fieldPath)': \(detail)",
                   alias: alias, collection: collection, id: id, fieldPath: fieldPath)
    }
    /// An error with code ``Code/encodingFailed`` and its message.
    package static func encodingFailed(collection: String, id: String, fieldPath: String, detail: String) -> DepotError {
        DepotError(code: .encodingFailed, message: "document \(collection)/\(id) cannot be encoded at '\(fieldPath.isEmpty ? "(root)" : fieldPath)': \(detail)",
                   collection: collection, id: id, fieldPath: fieldPath)
    }
    /// An error with code ``Code/danglingReference`` and its message.
    package static func danglingReference(parentCollection: String, parentID: String, childCollection: String, childID: String) -> DepotError {
        DepotError(code: .danglingReference, message: "\(parentCollection)/\(parentID) references \(childCollection)/\(childID), which is not stored",
                   collection: childCollection, id: childID)
    }
    /// An error with code ``Code/referenceCycle`` and its message.
    package static func referenceCycle(chain: [String]) -> DepotError {
        DepotError(code: .referenceCycle, message: "reference cycle: " + chain.joined(separator: " → "))
    }
    /// An error with code ``Code/unknownReferenceType`` and its message.
    /// Names the document holding the reference and the reference's field path, never the
    /// collection or ID the reference stores (bytes of the record).
    package static func unknownReferenceType(alias: String, collection: String, id: String, fieldPath: String, expected: String) -> DepotError {
        unresolvableReference(expected: expected).locatingReference(alias: alias, collection: collection, id: id, fieldPath: fieldPath)
    }
    /// A reference the resolver cannot turn into `expected`, before the read that met it says
    /// where it lies (``locatingReference(alias:collection:id:fieldPath:)``).
    package static func unresolvableReference(expected: String) -> DepotError {
        DepotError(code: .unknownReferenceType, message: "a reference cannot be read as \(expected) (it refers to another collection or ID kind)")
    }
    /// This error of ``unresolvableReference(expected:)`` naming the document and field that hold the reference.
    package func locatingReference(alias: String, collection: String, id: String, fieldPath: String) -> DepotError {
        DepotError(code: code, message: "document \(collection)/\(id) in alias '\(alias)' at '\(fieldPath.isEmpty ? "(root)" : fieldPath)': \(message)",
                   alias: alias, collection: collection, id: id, fieldPath: fieldPath)
    }
    /// An error with code ``Code/idKindMismatch`` and its message.
    package static func idKindMismatch(alias: String, collection: String, stored: IDKind, requested: IDKind) -> DepotError {
        DepotError(code: .idKindMismatch, message: "collection '\(collection)' in alias '\(alias)' has \(stored.rawValue) IDs, not \(requested.rawValue)",
                   alias: alias, collection: collection)
    }
    /// An error with code ``Code/invalidKey`` and its message.
    package static func invalidKey(detail: String) -> DepotError {
        DepotError(code: .invalidKey, message: "invalid key: \(detail)")
    }
    /// An error with code ``Code/invalidAliasName`` and its message.
    package static func invalidAliasName(_ name: String, detail: String) -> DepotError {
        DepotError(code: .invalidAliasName, message: "invalid alias name '\(name)': \(detail)")
    }
    /// An error with code ``Code/invalidCollectionName`` and its message.
    package static func invalidCollectionName(_ name: String, detail: String) -> DepotError {
        DepotError(code: .invalidCollectionName, message: "invalid collection name '\(name)': \(detail)")
    }
    /// An error with code ``Code/revisionConflict`` and its message.
    package static func revisionConflict(alias: String, collection: String, id: String, expected: UInt64, actual: UInt64?) -> DepotError {
        DepotError(code: .revisionConflict,
                   message: "conditional write of \(collection)/\(id) in alias '\(alias)' expected revision \(expected), found \(actual.map(String.init) ?? "no record")",
                   alias: alias, collection: collection, id: id)
    }
    /// An error with code ``Code/invalidOption``: names the option and its allowed range.
    package static func invalidOption(_ name: String, allowed: String) -> DepotError {
        DepotError(code: .invalidOption, message: "option '\(name)' is out of range: allowed \(allowed)")
    }
    /// An error with code ``Code/readOnlyTransaction`` and its message.
    package static func readOnlyTransaction(operation: String) -> DepotError {
        DepotError(code: .readOnlyTransaction, message: "cannot \(operation) in a read-only transaction; use write { } (or beginTransaction())")
    }
    /// An error with code ``Code/invalidIndex`` and its message.
    package static func invalidIndex(collection: String, index: String, detail: String) -> DepotError {
        DepotError(code: .invalidIndex, message: "index '\(index)' of \(collection): \(detail)", collection: collection)
    }
    /// An error with code ``Code/uniqueIndexViolation`` and its message.
    package static func uniqueIndexViolation(alias: String, collection: String, index: String, id: String, conflictingID: String) -> DepotError {
        DepotError(code: .uniqueIndexViolation,
                   message: "unique index '\(index)' of \(collection) in alias '\(alias)': \(collection)/\(id) has the same value as \(collection)/\(conflictingID)",
                   alias: alias, collection: collection, id: id)
    }
    /// An error with code ``Code/transformFailed``: names the collection (`$kv` for key/value
    /// records) and the ID, and what the transform's error says (its `LocalizedError`
    /// description, which ``RecordTransform`` implementations keep free of record content and
    /// key material; else its type).
    package static func transformFailed(keyspace: String, key: UnsafeRawBufferPointer, detail: String) -> DepotError {
        let (collection, id) = transformNames(keyspace: keyspace, key: key)
        return DepotError(code: .transformFailed,
                          message: "record \(collection)/\(id) could not pass the store's record transform (\(detail)): wrong key, or damaged",
                          collection: collection, id: id)
    }
    /// An error with code ``Code/transformFailed`` for a sound record stored without the
    /// transform (a store written by handles without one, opened with one).
    package static func unsealedRecord(keyspace: String, key: UnsafeRawBufferPointer) -> DepotError {
        let (collection, id) = transformNames(keyspace: keyspace, key: key)
        return DepotError(code: .transformFailed,
                          message: "record \(collection)/\(id) is not sealed: it was written without a record transform "
                              + "(a store that is not encrypted), so a handle with one cannot open it; open the store without StoreOptions.recordTransform",
                          collection: collection, id: id)
    }
    private static func transformNames(keyspace: String, key: UnsafeRawBufferPointer) -> (collection: String, id: String) {
        let collection = keyspace.hasPrefix(StoreLayout.keyValuePrefix) ? StoreLayout.keyValueCollection
            : StoreLayout.parse(keyspace)?.collection ?? keyspace
        let id = String(validatingUTF8Bytes: key) ?? ("0x" + key.prefix(32).map { String(format: "%02x", $0) }.joined())
        return (collection, id)
    }
    /// An error with code ``Code/transformRequired``: the record is sealed (encrypted) and the
    /// store has no ``RecordTransform`` to open it.
    package static func transformRequired(alias: String, collection: String, id: String) -> DepotError {
        DepotError(code: .transformRequired,
                   message: "record \(collection)/\(id) in alias '\(alias)' is encrypted (sealed by a record transform): open the store with its key (StoreOptions.recordTransform) to read it",
                   alias: alias, collection: collection, id: id)
    }
    /// An error with code ``Code/deleteDenied`` and its message.
    package static func deleteDenied(collection: String, id: String, referencedBy source: String, count: Int) -> DepotError {
        DepotError(code: .deleteDenied,
                   message: "cannot delete \(collection)/\(id): \(count) \(source) document\(count == 1 ? "" : "s") still reference it (delete rule: deny)",
                   collection: collection, id: id)
    }
    /// An error with code ``Code/newerVersion`` and its message.
    package static func newerVersion(collection: String, stored: Int, declared: Int, typeName: String) -> DepotError {
        DepotError(code: .newerVersion,
                   message: "collection '\(collection)' was written by version \(stored) of its type; \(typeName) is version \(declared): update the app (or migrate) before reading it",
                   collection: collection)
    }
    /// An error with code ``Code/undoConflict`` and its message.
    package static func undoConflict(collection: String, id: String) -> DepotError {
        DepotError(code: .undoConflict,
                   message: "cannot undo or redo: \(collection)/\(id) was changed since (by another handle, process or a later write); nothing was written",
                   collection: collection, id: id)
    }
    /// An error with code ``Code/unknownFetchRequest`` and its message.
    package static func unknownFetchRequest(_ name: String) -> DepotError {
        DepotError(code: .unknownFetchRequest, message: "no fetch request named '\(name)' is registered")
    }
    /// An error with code ``Code/fetchRequestTypeMismatch`` and its message.
    package static func fetchRequestTypeMismatch(name: String, registered: String, requested: String) -> DepotError {
        DepotError(code: .fetchRequestTypeMismatch, message: "fetch request '\(name)' fetches \(registered), not \(requested)")
    }
    /// An error with code ``Code/missingSubstitution`` and its message.
    package static func missingSubstitution(request: String, variable: String) -> DepotError {
        DepotError(code: .missingSubstitution, message: "fetch request '\(request)' needs a value for '\(variable)'")
    }
    /// An error with code ``Code/notStored`` and its message: `operation` names what was asked
    /// (`delete`, `set the sync status of`); `others` counts further missing IDs of the call.
    package static func notStored(operation: String, alias: String, collection: String, id: String, others: Int = 0) -> DepotError {
        let more = others > 0 ? " (and \(others) more of the IDs given)" : ""
        return DepotError(code: .notStored,
                          message: "cannot \(operation) \(collection)/\(id)\(more): no such document is stored in alias '\(alias)'; nothing was changed",
                          alias: alias, collection: collection, id: id)
    }
    /// An error with code ``Code/mistypedSubstitution`` and its message.
    package static func mistypedSubstitution(request: String, variable: String, expected: String, actual: String) -> DepotError {
        DepotError(code: .mistypedSubstitution, message: "fetch request '\(request)': '\(variable)' must be \(expected), got \(actual)")
    }
}

extension String {
    /// The bytes as text when they are printable UTF-8 (IDs in messages), else nil.
    package init?(validatingUTF8Bytes bytes: UnsafeRawBufferPointer) {
        guard let text = String(bytes: bytes, encoding: .utf8), !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            return nil
        }
        self = text
    }
}
