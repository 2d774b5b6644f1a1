/// A seed import that fails: code ``DepotError/Code/seedFailed``, with what was wrong
/// (``DepotError/seedProblem``), the file (``DepotError/file``) and the JSON path in it
/// (``DepotError/fieldPath``). Nothing of the tree was stored: it commits in one transaction.
extension DepotError.Code {
    /// A seed tree could not be imported (``Store/seed(from:options:)``,
    /// ``Store/checkSeedTree(at:options:)``): ``DepotError/seedProblem`` says what was wrong,
    /// ``DepotError/file`` and ``DepotError/fieldPath`` (a JSON path) where.
    public static let seedFailed = DepotError.Code(rawValue: "seedFailed")
}

extension DepotError {
    /// What was wrong with a seed tree (an error with code ``Code/seedFailed``).
    public enum SeedProblem: String, Sendable, Hashable, CaseIterable {
        /// A seed file (or the seed folder) does not exist.
        case missingFile
        /// A seed file cannot be read (it is a folder, or reading failed).
        case unreadableFile
        /// A seed file is not JSON, or JSON that cannot be stored exactly.
        case malformedJSON
        /// A seed file is JSON, but not in the seed format (an entity that is not an object, a
        /// malformed `seedlings` link, a name that cannot be a collection).
        case invalidSeed
        /// Seed files link to each other in a circle.
        case cycle
        /// A link leads outside the seed folder (also through a symbolic link).
        case outsideRoot
        /// A `seedFile` link is an absolute path (links are relative to the linking file).
        case absolutePath
        /// A `seedUrl` names a host that remote loading is not enabled for.
        case remoteNotAllowed
        /// Loading a remote seed file failed.
        case remoteFailed
        /// The tree is over one of the ``SeedOptions`` limits (files, bytes, nesting depth).
        case limitExceeded
        /// One instance is given twice with different contents.
        case conflictingDuplicate
        /// An identifying attribute is missing or cannot be an ID.
        case invalidIdentity
        /// An instance does not decode as the type registered for its entity.
        case typeMismatch
        /// An instance has the value of a unique index that another document (stored, or
        /// seeded before it) has.
        case uniqueIndexViolation
    }

    /// Matches ``Code/seedFailed``.
    public static let seedFailed = DepotError(pattern: .seedFailed)

    /// An error with code ``Code/seedFailed``: `problem` in `file` at `jsonPath`; `detail` says
    /// what is wrong (never a stored value).
    package static func seedFailed(_ problem: SeedProblem, file: String, jsonPath: String?, detail: String) -> DepotError {
        DepotError(code: .seedFailed, message: "seed \(problem.rawValue) in \(file)\(jsonPath.map { " at \($0)" } ?? ""): \(detail)",
                   fieldPath: jsonPath, file: file, seedProblem: problem, underlying: nil)
    }
}
