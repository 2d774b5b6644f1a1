import Foundation

/// How ``Store/seed(from:options:)`` loads a seed tree.
public struct SeedOptions: Sendable {
    /// The folder seed files must stay inside (after resolving symlinks). Defaults to the folder
    /// of the root file.
    public var rootDirectory: URL?
    /// Hosts whose `seedUrl` links may be fetched over HTTP(S). Empty: remote loading is refused.
    public var allowedRemoteHosts: Set<String> = []
    /// Loads remote seed files instead of the built-in HTTP client (tests, caches, sandboxes).
    /// When set, every `seedUrl` goes through it (`allowedRemoteHosts` is not consulted).
    public var remoteLoader: (@Sendable (URL) throws -> Data)?
    /// At most this many files in one tree.
    public var maxFiles = 10_000
    /// At most this many bytes per file.
    public var maxBytesPerFile = 64 << 20
    /// At most this many bytes in the whole tree.
    public var maxTotalBytes = 1 << 30
    /// At most this JSON nesting depth.
    public var maxDepth = 64
    /// Called after each file with the running totals (files read, documents found).
    public var progress: (@Sendable (SeedProgress) -> Void)?
    /// How dates are written in the seed files, for the date fields of registered types (a type's
    /// own ``Document/dateStrategy`` wins; nil: the store's `StoreOptions/dateStrategy`). Seeded
    /// dates are stored exactly, as dates.
    public var dateStrategy: DateStrategy?

    /// The defaults: local files only, inside the root file's folder.
    public init() {}
}

/// Running totals reported while seeding.
public struct SeedProgress: Sendable, Hashable {
    /// Files read so far.
    public var filesRead: Int
    /// Instances found so far (before merging identical ones).
    public var documentsFound: Int
    /// The file just read, relative to the root folder (or its URL).
    public var currentFile: String
}

/// What a seed import stored.
public struct SeedSummary: Sendable, Hashable, Codable {
    /// Records stored per collection (an object found in several files counts once).
    public var documentsPerCollection: [String: Int]
    /// Files read (each file once, however often it is linked).
    public var filesRead: Int
    /// Bytes read.
    public var bytesRead: Int
    /// Identifying attributes filled with generated unique IDs.
    public var generatedIDs: Int
    /// Wall time of the import in seconds.
    public var seconds: Double

    /// Records stored in all.
    public var totalDocuments: Int { documentsPerCollection.values.reduce(0, +) }
}
