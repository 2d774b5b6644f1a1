/// The codes for an operation that cannot run as asked (what earlier versions reported as one
/// `invalidState`), with their patterns and constructors.
extension DepotError.Code {
    /// The store's driver cannot do this (explicit transactions or raw LMDB access on another
    /// driver, savepoints on a driver without transactions).
    public static let unsupported = DepotError.Code(rawValue: "unsupported")
    /// A transaction was used against its rules: committed while its closure owns it, used after
    /// it ended, a write begun inside a write on the same thread.
    public static let transactionMisuse = DepotError.Code(rawValue: "transactionMisuse")
    /// The storage did not behave as its driver promises (a keyspace could not be created or
    /// opened, the store's meta data is missing, a record reported present is absent).
    public static let storageInconsistent = DepotError.Code(rawValue: "storageInconsistent")
    /// A query condition is malformed (empty field, unknown operator, a value of the wrong kind).
    public static let invalidQuery = DepotError.Code(rawValue: "invalidQuery")
    /// A delete rule cannot be registered (an empty field path, a field of the wrong type).
    public static let invalidDeleteRule = DepotError.Code(rawValue: "invalidDeleteRule")
    /// An object was used after the store it belongs to was released (an undo history, a
    /// unique-ID generator).
    public static let ownerReleased = DepotError.Code(rawValue: "ownerReleased")
    /// A counter ran out (unique IDs).
    public static let exhausted = DepotError.Code(rawValue: "exhausted")
    /// A document is held as another type than the one asked for (the unit of work).
    public static let documentTypeMismatch = DepotError.Code(rawValue: "documentTypeMismatch")
    /// A schemaless document is not a JSON object.
    public static let invalidDocument = DepotError.Code(rawValue: "invalidDocument")
    /// A migration step conflicts with what is stored (a rename onto a collection that holds
    /// documents).
    public static let migrationConflict = DepotError.Code(rawValue: "migrationConflict")
}

extension DepotError {
    /// Matches ``Code/unsupported``.
    public static let unsupported = DepotError(pattern: .unsupported)
    /// Matches ``Code/transactionMisuse``.
    public static let transactionMisuse = DepotError(pattern: .transactionMisuse)
    /// Matches ``Code/storageInconsistent``.
    public static let storageInconsistent = DepotError(pattern: .storageInconsistent)
    /// Matches ``Code/invalidQuery``.
    public static let invalidQuery = DepotError(pattern: .invalidQuery)
    /// Matches ``Code/invalidDeleteRule``.
    public static let invalidDeleteRule = DepotError(pattern: .invalidDeleteRule)
    /// Matches ``Code/ownerReleased``.
    public static let ownerReleased = DepotError(pattern: .ownerReleased)
    /// Matches ``Code/exhausted``.
    public static let exhausted = DepotError(pattern: .exhausted)
    /// Matches ``Code/documentTypeMismatch``.
    public static let documentTypeMismatch = DepotError(pattern: .documentTypeMismatch)
    /// Matches ``Code/invalidDocument``.
    public static let invalidDocument = DepotError(pattern: .invalidDocument)
    /// Matches ``Code/migrationConflict``.
    public static let migrationConflict = DepotError(pattern: .migrationConflict)

    /// An error with code ``Code/unsupported``; `detail` is the whole message.
    package static func unsupported(_ detail: String) -> DepotError { DepotError(code: .unsupported, message: detail) }
    /// An error with code ``Code/transactionMisuse``; `detail` is the whole message.
    package static func transactionMisuse(_ detail: String) -> DepotError { DepotError(code: .transactionMisuse, message: detail) }
    /// An error with code ``Code/storageInconsistent``; `detail` is the whole message.
    package static func storageInconsistent(_ detail: String) -> DepotError { DepotError(code: .storageInconsistent, message: detail) }
    /// An error with code ``Code/invalidQuery``; `detail` is the whole message.
    package static func invalidQuery(_ detail: String) -> DepotError { DepotError(code: .invalidQuery, message: detail) }
    /// An error with code ``Code/invalidDeleteRule``; `detail` is the whole message.
    package static func invalidDeleteRule(_ detail: String) -> DepotError { DepotError(code: .invalidDeleteRule, message: detail) }
    /// An error with code ``Code/ownerReleased``; `detail` is the whole message.
    package static func ownerReleased(_ detail: String) -> DepotError { DepotError(code: .ownerReleased, message: detail) }
    /// An error with code ``Code/exhausted``; `detail` is the whole message.
    package static func exhausted(_ detail: String) -> DepotError { DepotError(code: .exhausted, message: detail) }
    /// An error with code ``Code/documentTypeMismatch``; `detail` is the whole message.
    package static func documentTypeMismatch(_ detail: String) -> DepotError { DepotError(code: .documentTypeMismatch, message: detail) }
    /// An error with code ``Code/invalidDocument``; `detail` is the whole message.
    package static func invalidDocument(_ detail: String) -> DepotError { DepotError(code: .invalidDocument, message: detail) }
    /// An error with code ``Code/migrationConflict``; `detail` is the whole message.
    package static func migrationConflict(_ detail: String) -> DepotError { DepotError(code: .migrationConflict, message: detail) }
}
