import DepotCore
import DepotLMDB
import Foundation

/// What ``Verifier/verify(_:maxProblems:recordTransform:)`` found.
public struct VerificationReport: Sendable, Codable {
    /// One named database that was walked.
    public struct DatabaseSummary: Sendable, Codable, Hashable {
        public var name: String
        /// Entries visited.
        public var entries: Int
        /// Document records whose checksum and format were checked (0 for key/value databases).
        public var documents: Int
        /// Document records sealed by a ``RecordTransform`` (encrypted): their envelope is
        /// checked, their checksum and content cannot be without the key.
        public var sealed: Int = 0
        /// Sealed records opened with the key given to the verifier, then checked as plain ones
        /// (they count in ``documents`` too).
        public var opened: Int = 0
        /// Sealed records the key given to the verifier did not open (each is also a problem).
        public var unopened: Int = 0
    }

    /// Every named database walked, in name order.
    public var databases: [DatabaseSummary] = []
    /// Free-list records walked (LMDB's internal database 0).
    public var freeListRecords = 0
    /// What is wrong, each naming the database and, for a record, its key. Never a stored value.
    public var problems: [String] = []
    /// Whether more problems were found than listed.
    public var truncated = false

    /// Whether nothing is wrong.
    public var isClean: Bool { problems.isEmpty }
    /// Entries visited in all databases.
    public var totalEntries: Int { databases.reduce(0) { $0 + $1.entries } }
    /// Document records checked in all databases.
    public var totalDocuments: Int { databases.reduce(0) { $0 + $1.documents } }
    /// Sealed (encrypted) document records in all databases, not checked without the key.
    public var totalSealed: Int { databases.reduce(0) { $0 + $1.sealed } }
    /// Sealed records opened with the given key, in all databases.
    public var totalOpened: Int { databases.reduce(0) { $0 + $1.opened } }
    /// Sealed records the given key did not open, in all databases.
    public var totalUnopened: Int { databases.reduce(0) { $0 + $1.unopened } }
}

/// Walks a whole environment: every page of every named database and of the free list through
/// LMDB cursors, and every document record's format version and CRC-32C checksum, and decodes
/// every document payload. A record sealed by a ``RecordTransform`` (encrypted) is counted as
/// sealed, never as damaged: without the key only its envelope can be checked.
///
/// LMDB 0.9 trusts its on-disk structures, so a damaged page can crash the process that reads it.
/// Run this in a process of its own (`depot verify` does: it re-runs itself as a child and
/// reports a crash of the child), never in a process whose work you care about.
public enum Verifier {
    /// Verifies `environment`; throws only when the environment cannot be read at all.
    /// - Parameters:
    ///   - environment: The environment to walk.
    ///   - maxProblems: How many problems the report lists at most.
    ///   - recordTransform: The transform (with the key) that sealed the store's records: sealed
    ///     records are opened with it and checked as plain ones. Without it they are counted as
    ///     sealed, their envelopes checked.
    public static func verify(_ environment: Environment, maxProblems: Int = 100,
                              recordTransform: (any RecordTransform)? = nil) throws -> VerificationReport {
        var report = VerificationReport()
        func problem(_ text: String) {
            if report.problems.count < maxProblems { report.problems.append(text) } else { report.truncated = true }
        }
        do {
            report.freeListRecords = try environment.freeList().count
        } catch {
            problem("free list: \(error)")
        }
        let names: [String]
        do {
            names = try environment.databaseNames().sorted()
        } catch {
            problem("main database (the list of named databases): \(error)")
            return report
        }
        let kinds = (try? idKinds(environment)) ?? [:]
        for name in names {
            var summary = VerificationReport.DatabaseSummary(name: name, entries: 0, documents: 0)
            let documentDatabase = StoreLayout.parse(name)
            let kind = kinds[name]
            /// Checks a plain (or opened) document record: format, checksum, payload.
            func checkRecord(_ value: UnsafeRawBufferPointer, id: String, alias: String, collection: String) {
                summary.documents += 1
                let payload: UnsafeRawBufferPointer
                do {
                    payload = try Record.open(value).1
                } catch Record.Problem.checksum {
                    problem("database '\(name)' key '\(id)': \(DepotError.checksumMismatch(alias: alias, collection: collection, id: id))")
                    return
                } catch {
                    problem("database '\(name)' key '\(id)': the record is damaged (\(error))")
                    return
                }
                do {
                    _ = try DocumentValue(binary: payload)
                } catch {
                    problem("database '\(name)' key '\(id)': the document does not decode (\(error))")
                }
            }
            do {
                let db = try environment.openDatabase(name, create: false)
                var order = KeyOrder(db.flags)
                try environment.read { txn in
                    let region = try txn.usedMapRegion()
                    let last = region?.lastPageNumber ?? 0, pages = last == .max ? last : last + 1 // read from the file: no overflow
                    try txn.forEachRawUnchecked(in: db) { key, value in
                        summary.entries += 1
                        // A damaged node can point past the used part of the file: reading such
                        // bytes would crash. Check before touching them (raw databases too).
                        guard region?.contains(key) ?? true else {
                            problem("database '\(name)' entry \(summary.entries): the key (\(key.count) bytes) "
                                    + "lies outside the used part of the data file (\(pages) pages)")
                            return true
                        }
                        guard region?.contains(value) ?? true else {
                            // The node is damaged: its key may be too, so only its position is shown.
                            problem("database '\(name)' entry \(summary.entries) (a key of \(key.count) bytes): the value "
                                    + "(\(value.count) bytes) runs past the used part of the data file (\(pages) pages)")
                            return true
                        }
                        // LMDB never stores a longer key (nor a longer value under sorted duplicates).
                        if key.count > environment.maxKeySize || (db.flags.contains(.dupSort) && value.count > environment.maxKeySize) {
                            let what = key.count > environment.maxKeySize ? "a key of \(key.count) bytes" : "a sorted value of \(value.count) bytes"
                            problem("database '\(name)' entry \(summary.entries): \(what), longer than LMDB stores (\(environment.maxKeySize)): a damaged node")
                            return true
                        }
                        // A damaged key, node pointer or page header shows as keys out of order
                        // (the record checksums do not cover keys).
                        if let disorder = order.check(key, value) {
                            problem("database '\(name)' entry \(summary.entries): \(disorder): a damaged key, node or page")
                        }
                        if name == StoreLayout.metaDatabase, key.starts(with: StoreLayout.descriptorRoot.utf8),
                           IDKind(rawValue: validUTF8String(value) ?? "") == nil {
                            problem("database '\(name)' key '\(displayKey(key))': the collection descriptor names no ID kind (a damaged record)")
                        }
                        guard let (alias, collection) = documentDatabase else { return true }
                        let id = key.count > environment.maxKeySize ? displayKey(key) : kind.map { $0.display(key: key) } ?? displayKey(key)
                        if value.first == Record.sealedMarker {
                            if value.count < 2 {
                                problem("database '\(name)' key '\(id)': the sealed record holds nothing after its marker")
                                return true
                            }
                            guard let recordTransform else {
                                summary.sealed += 1
                                return true
                            }
                            let opened: [UInt8]
                            do {
                                opened = try recordTransform.open(UnsafeRawBufferPointer(rebasing: value.dropFirst()),
                                                                  context: RecordTransformContext(keyspace: name, key: [UInt8](key)))
                            } catch {
                                summary.unopened += 1
                                problem("database '\(name)' key '\(id)': the sealed record does not open with the given key (the wrong key, or a changed record)")
                                return true
                            }
                            summary.opened += 1
                            opened.withUnsafeBytes { checkRecord($0, id: id, alias: alias, collection: collection) }
                            return true
                        }
                        checkRecord(value, id: id, alias: alias, collection: collection)
                        return true
                    }
                    // The count LMDB keeps in the database's record must be what its tree holds:
                    // a damaged page header or database record shows here (and in `collections`).
                    let recorded = try txn.stat(db).entries
                    if recorded != summary.entries {
                        problem("database '\(name)': its record counts \(recorded) entries, and walking its tree found \(summary.entries): a damaged page or database record")
                    }
                }
            } catch {
                problem("database '\(name)': reading stopped after \(summary.entries) entries: \(error)")
            }
            report.databases.append(summary)
        }
        return report
    }

    /// Checks that a scan meets keys in LMDB's order (byte order; for sorted duplicates, values
    /// in byte order under one key): damage to a key or to a page's node pointers shows as a key
    /// out of order, a repeated key or an empty key. Databases with other comparisons
    /// (`integerKey`, `reverseKey`, `integerDup`, `reverseDup`) are not checked.
    struct KeyOrder {
        let checksKeys: Bool
        let duplicates: Bool
        let checksValues: Bool
        var previousKey: [UInt8]?
        var previousValue: [UInt8]?

        init(_ flags: DatabaseFlags) {
            checksKeys = flags.isDisjoint(with: [.integerKey, .reverseKey])
            duplicates = flags.contains(.dupSort)
            checksValues = duplicates && flags.isDisjoint(with: [.integerDup, .reverseDup])
        }

        /// What is wrong with meeting `key` (and `value`) next, or nil.
        mutating func check(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> String? {
            guard checksKeys else { return nil }
            if key.isEmpty { return "an empty key (LMDB never stores one)" }
            defer {
                previousKey = [UInt8](key)
                if checksValues { previousValue = [UInt8](value) }
            }
            guard let previousKey else { return nil }
            let order = Self.compare(previousKey, key)
            if order > 0 { return "the key sorts before the key of the entry before it" }
            if order == 0 && !duplicates { return "the same key as the entry before it" }
            if order == 0 && checksValues, let previousValue, Self.compare(previousValue, value) >= 0 {
                return "the value sorts before (or equals) the value before it under the same key"
            }
            return nil
        }

        /// Byte-wise comparison, shorter first on a common prefix (LMDB's default order).
        static func compare(_ a: [UInt8], _ b: UnsafeRawBufferPointer) -> Int {
            for (x, y) in zip(a, b) where x != y { return x < y ? -1 : 1 }
            return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
        }
    }

    /// The ID kind of every document database, from the store's collection descriptors.
    static func idKinds(_ environment: Environment) throws -> [String: IDKind] {
        guard try environment.databaseNames().contains(StoreLayout.metaDatabase) else { return [:] }
        let meta = try environment.openDatabase(StoreLayout.metaDatabase, key: StringCodec.self, value: StringCodec.self, create: false)
        return try environment.read { txn in
            var kinds: [String: IDKind] = [:]
            for (key, value) in try txn.entries(in: meta, range: .prefix(StoreLayout.descriptorRoot)) {
                let parts = key.split(separator: "/", maxSplits: 2)
                guard parts.count == 3, let kind = IDKind(rawValue: value) else { continue }
                kinds[StoreLayout.documentDatabase(alias: String(parts[1]), collection: String(parts[2]))] = kind
            }
            return kinds
        }
    }

    /// A key as text when it is printable UTF-8, else as `0x…`. A key longer than LMDB allows
    /// comes from a damaged node (its bytes may run into a stored value): only its size is shown.
    static func displayKey(_ key: UnsafeRawBufferPointer) -> String {
        if key.count > Environment.standardMaxKeySize { return "(a damaged key of \(key.count) bytes)" }
        if let text = validUTF8String(key),
           !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            return text
        }
        return "0x" + key.map { String(format: "%02x", $0) }.joined()
    }
}
