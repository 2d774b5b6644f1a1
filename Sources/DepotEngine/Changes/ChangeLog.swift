import Foundation

/// The cross-process change log behind DepotCore's `ExternalChangeWatcher`.
///
/// Design: a watcher (in any process) keeps a lease in the store's meta records
/// (`watch/<token>` → expiry, refreshed every 2 s, valid 10 s). A write transaction looks for live
/// leases at most once a second; only while one exists does it record its changes and append
/// one entry to the keyspace `depot.changes` (key: a sequence number from `changelog/next`,
/// value: the writer's token, the time, and the created/updated/deleted keys per alias and
/// collection), in the same transaction as the changes. Entries older than
/// ``retention`` are trimmed by the watchers when they renew their leases, off the
/// writers' path (a writer only appends). Nobody watching: no entry, no extra write — one cached
/// check per second.
package enum ChangeLog {
    /// The keyspace of the entries.
    package static let keyspace = StoreLayout.changeLogDatabase
    /// The meta record of the next sequence number.
    package static let counterKey = StoreLayout.changeLogCounterKey
    /// The meta records' prefix of watcher leases.
    package static let leasePrefix = StoreLayout.watcherLeasePrefix
    /// How long entries are kept for watchers that fall behind.
    package static let retention: Double = 60

    /// The changes of one collection in one entry: keys created, updated and deleted.
    package struct Part: Codable {
        package var alias: String
        package var collection: String
        package var kind: IDKind
        package var created: [Data] = []
        package var updated: [Data] = []
        package var deleted: [Data] = []

        /// A part with no changes yet.
        package init(alias: String, collection: String, kind: IDKind) {
            self.alias = alias
            self.collection = collection
            self.kind = kind
        }
    }

    /// One commit's entry: the writer's token, the time (seconds since 1970), the changes.
    package struct Entry: Codable {
        package var writer: String
        package var time: Double
        package var parts: [Part]

        /// An entry of `writer` at `time`.
        package init(writer: String, time: Double, parts: [Part]) {
            self.writer = writer
            self.time = time
            self.parts = parts
        }
    }

    /// Appends the changes recorded since `mark` (if any) as one entry. Called inside the write.
    package static func append(_ changes: [(ChangeRecorder.Key, ChangeRecorder.State)], writer: String, txn: any StorageTransaction) throws {
        var parts: [String: Part] = [:]
        for (key, state) in changes {
            let id = key.alias + "/" + key.collection
            var part = parts[id] ?? Part(alias: key.alias, collection: key.collection, kind: state.idKind)
            switch (state.existedBefore, state.existsNow) {
            case (false, true): part.created.append(Data(key.key))
            case (true, true): part.updated.append(Data(key.key))
            case (true, false): part.deleted.append(Data(key.key))
            case (false, false): continue
            }
            parts[id] = part
        }
        if parts.isEmpty { return }
        guard let log = try txn.keyspace(named: keyspace, create: true) else { return }
        let now = Date().timeIntervalSince1970
        let entry = Entry(writer: writer, time: now, parts: parts.values.sorted { ($0.alias, $0.collection) < ($1.alias, $1.collection) })
        // A driver whose writers commit side by side numbers the entry itself (no shared row);
        // otherwise the store's counter, written in the same transaction.
        let encoded = entry.encoded()
        if try txn.appendChangeLogEntry(encoded, in: log) { return }
        guard let meta = try txn.keyspace(named: StoreLayout.metaDatabase, create: true) else { return }
        let seq = try txn.withValue(forKey: counterKey, in: meta) { try BigEndian<UInt64>.decode($0) } ?? 1
        try BigEndian<UInt64>.withBytes(of: seq) { k in try txn.put(encoded, forKey: [UInt8](k), in: log) }
        let (next, overflow) = seq.addingReportingOverflow(1)
        if overflow { throw DepotError.exhausted("the change log's counter is exhausted") }
        try BigEndian<UInt64>.withBytes(of: next) { v in try counterKey.withUnsafeBytes { try txn.put(v, forKey: $0, in: meta) } }
    }

    /// Where a reader starts: the stamp horizon of the driver, else the counter's next number.
    package static func start(_ txn: any StorageTransaction) throws -> UInt64 {
        if let horizon = try txn.changeLogHorizon() { return horizon }
        guard let meta = try txn.keyspace(named: StoreLayout.metaDatabase, create: false) else { return 1 }
        return try txn.withValue(forKey: counterKey, in: meta) { try BigEndian<UInt64>.decode($0) } ?? 1
    }

    /// Deletes the entries older than ``retention`` at `now` (at most `limit`, oldest first);
    /// returns how many. Run by watchers with their lease renewal, never by writers, so that
    /// writers never scan the log (on a server, a scan locks the whole log against them).
    @discardableResult
    package static func trim(_ txn: any StorageTransaction, now: Double = Date().timeIntervalSince1970, limit: Int = 10_000) throws -> Int {
        guard let log = try txn.keyspace(named: keyspace, create: false) else { return 0 }
        var old: [[UInt8]] = []
        // Entries are in sequence order, which is commit order: the old ones come first.
        try txn.scan(log, prefix: nil, reverse: false) { key, value in
            guard old.count < limit, let e = try? Entry.decode(value), e.time < now - retention else { return false }
            old.append([UInt8](key))
            return true
        }
        for key in old { _ = try txn.delete(forKey: key, in: log) }
        return old.count
    }

    /// Writes (or renews) watcher lease `lease`, valid until `expiry` (seconds since 1970), then
    /// trims the log: its old entries go here, every 2 s while someone watches, not in the writes.
    package static func renewLease(_ lease: [UInt8], until expiry: Double, _ txn: any StorageTransaction) throws {
        guard let meta = try txn.keyspace(named: StoreLayout.metaDatabase, create: true) else { return }
        try withUnsafeBytes(of: expiry.bitPattern) { v in try lease.withUnsafeBytes { try txn.put(v, forKey: $0, in: meta) } }
        _ = try trim(txn)
    }

    /// Removes watcher lease `lease` (writers stop logging once no lease is live).
    package static func releaseLease(_ lease: [UInt8], _ txn: any StorageTransaction) throws {
        if let meta = try txn.keyspace(named: StoreLayout.metaDatabase, create: true) {
            _ = try txn.delete(forKey: lease, in: meta)
        }
    }

    /// Whether a live watcher lease exists (read in `txn`).
    package static func hasLiveLease(_ txn: any StorageTransaction) throws -> Bool {
        guard let meta = try txn.keyspace(named: StoreLayout.metaDatabase, create: false) else { return false }
        let now = Date().timeIntervalSince1970
        var live = false
        try txn.scan(meta, prefix: Array(leasePrefix.utf8), reverse: false) { _, value in
            if value.count == 8, Double(bitPattern: value.loadUnaligned(as: UInt64.self)) > now { live = true; return false }
            return true
        }
        return live
    }

    /// The change set of one entry, with IDs rendered by their kind.
    package static func changeSet(_ entry: Entry) -> ChangeSet {
        ChangeSet(collections: entry.parts.map { p in
            func ids(_ keys: [Data]) -> [DocumentValue] { keys.map { k in k.withUnsafeBytes { p.kind.value(ofKey: $0) } } }
            return .init(alias: p.alias, collection: p.collection, created: ids(p.created), updated: ids(p.updated), deleted: ids(p.deleted))
        }, isExternal: true)
    }
}
