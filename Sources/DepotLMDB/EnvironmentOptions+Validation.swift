/// The allowed range of every numeric option of ``EnvironmentOptions`` and
/// ``GroupCommitOptions`` (the table in the README, "Options and their ranges").
extension EnvironmentOptions {
    /// Largest ``maxDatabases`` and ``maxReaders``: LMDB sizes per-transaction arrays by the first
    /// and the lock file by the second, so far larger values only exhaust memory or disk.
    public static let maxSlotCount = 65_536
    /// Longest ``GroupCommitOptions/maxWait`` and ``GroupCommitOptions/adaptiveWait``.
    public static let maxGroupCommitWait: Duration = .seconds(3_600)

    /// Checks every numeric option against its allowed range; ``Environment/open(path:options:)``
    /// calls it before touching the folder.
    ///
    /// - Throws: ``LMDBError/invalidArgument`` whose detail names the option and its allowed range.
    public func validate() throws {
        func check(_ ok: Bool, _ name: String, _ allowed: String) throws {
            guard ok else {
                throw LMDBError(code: LMDBError.invalidArgument.code, operation: "open environment",
                                detail: "option '\(name)' is out of range: allowed \(allowed)")
            }
        }
        let slots = "1 to \(Self.maxSlotCount)"
        try check(mapSize >= 0, "mapSize", "0 or more bytes (values below one page are raised to one page)")
        try check(maxMapSize >= 4096, "maxMapSize", "4096 or more bytes")
        try check((0...Self.maxSlotCount).contains(maxDatabases), "maxDatabases", "0 to \(Self.maxSlotCount)")
        try check((1...Self.maxSlotCount).contains(maxReaders), "maxReaders", slots)
        try check(fileMode <= 0o7777, "fileMode", "0 to 0o7777")
        try check(directoryMode <= 0o7777, "directoryMode", "0 to 0o7777")
        try check((0...Self.maxSlotCount).contains(readTransactionPoolSize), "readTransactionPoolSize", "0 to \(Self.maxSlotCount)")
        try groupCommit.validate(check)
    }
}

extension GroupCommitOptions {
    /// Checks the group-commit bounds (see ``EnvironmentOptions/validate()``).
    func validate(_ check: (Bool, String, String) throws -> Void) throws {
        let waits = "0 to 3600 seconds"
        try check(maxBatchSize >= 1, "groupCommit.maxBatchSize", "1 or more")
        try check(maxQueueLength >= 1, "groupCommit.maxQueueLength", "1 or more")
        try check(maxWait >= .zero && maxWait <= EnvironmentOptions.maxGroupCommitWait, "groupCommit.maxWait", waits)
        try check(adaptiveWait >= .zero && adaptiveWait <= EnvironmentOptions.maxGroupCommitWait, "groupCommit.adaptiveWait", waits)
    }
}
