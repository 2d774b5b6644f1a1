import Foundation

// `localizedDescription` (and an `NSError`'s) shows the message, not "The operation could not
// be completed".

extension LMDBError: LocalizedError {
    /// The ``description``: the operation, the database and LMDB's or the system's reason.
    public var errorDescription: String? { description }
}

extension LMDBError: CustomNSError {
    /// `"DepotLMDB.LMDBError"`.
    public static var errorDomain: String { "DepotLMDB.LMDBError" }
    /// The raw ``code``: an `MDB_*` code (negative) or an `errno` value (positive).
    public var errorCode: Int { Int(code) }
    /// The message under `NSLocalizedDescriptionKey` (swift-corelibs-foundation reads it from
    /// here, not from `LocalizedError`, once an error is a `CustomNSError`).
    public var errorUserInfo: [String: Any] { [NSLocalizedDescriptionKey: description] }
}

extension CodecError: LocalizedError {
    /// The ``description``.
    public var errorDescription: String? { description }
}
