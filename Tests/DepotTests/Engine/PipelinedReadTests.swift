@testable import DepotCore
import Foundation
import Synchronization
import Testing

/// `Store.retrieve` on a driver with `StorageCapabilities.pipelinedReads` (PostgreSQL): a
/// thread's reused read view reads the document before it reads the schema version (so that a
/// server answers both in one wait), and reads again when the version changed meanwhile.
@Suite struct PipelinedReadTests {
    struct Item: Document, Equatable {
        var id: String
        var name: String
    }

    /// A member of a team, an `Item` (a reference: decoding a member retrieves its team), at
    /// version 1 and 2.
    struct MemberV1: Document, Equatable {
        static var collection: String { "Member" }
        var id: String
        var team: Item?
    }
    struct MemberV2: Document, Equatable {
        static var collection: String { "Member" }
        static var version: Int { 2 }
        var id: String
        var team: Item?
    }

    /// A get whose document refers to another: the reference's own get settles the version
    /// check during the decode. When the version moved (another handle wrote the collection at
    /// a newer type version), the outer get must not hand out what it decoded with what it had
    /// resolved before: it reads again, and so reports the newer version.
    @Test func aGetWhoseReferenceSettledTheCheckReadsAgain() throws {
        let driver = RecordingDriver(pipelined: true)
        let store = try Store(driver: driver)
        try store.write { tx in _ = try tx.park(MemberV1(id: "m", team: Item(id: "t", name: "Core"))) }
        for _ in 0..<2 { #expect(try store.read { tx in try tx.retrieve(MemberV1.self, id: "m") }?.team?.name == "Core") }
        let other = try Store(driver: driver)
        try other.write { tx in _ = try tx.park(MemberV2(id: "n", team: nil)) }
        let error = #expect(throws: DepotError.self) { _ = try store.read { tx in try tx.retrieve(MemberV1.self, id: "m") } }
        #expect(error?.code == .newerVersion)
    }

    @Test func aWarmGetReadsTheDocumentBeforeTheSchemaVersion() throws {
        let driver = RecordingDriver(pipelined: true)
        let store = try Store(driver: driver)
        try store.write { tx in _ = try tx.park(Item(id: "a", name: "Ada")) }
        #expect(try store.retrieve(Item.self, id: "a") == Item(id: "a", name: "Ada")) // warms the view
        driver.log.clear()
        #expect(try store.retrieve(Item.self, id: "a") == Item(id: "a", name: "Ada"))
        #expect(driver.log.entries == ["read", "version"])
        // Inside a read closure too (the closure's first look-up confirms the version).
        driver.log.clear()
        _ = try store.read { tx in try tx.retrieve(Item.self, id: "a") }
        #expect(driver.log.entries == ["read", "version"])
        // Any other first look-up confirms the version before it reads.
        driver.log.clear()
        _ = try store.read { tx in try tx.retrieveAll(Item.self) }
        #expect(driver.log.entries.first == "version", "\(driver.log.entries)")
        // Without the capability (LMDB, memory): the version first.
        let plain = RecordingDriver(pipelined: false)
        let plainStore = try Store(driver: plain)
        try plainStore.write { tx in _ = try tx.park(Item(id: "a", name: "Ada")) }
        _ = try plainStore.retrieve(Item.self, id: "a")
        plain.log.clear()
        _ = try plainStore.retrieve(Item.self, id: "a")
        #expect(plain.log.entries == ["version", "read"])
    }

    @Test func aGetAfterTheCollectionWasDroppedAndMadeAgainReadsTheNewOne() throws {
        let driver = RecordingDriver(pipelined: true)
        let store = try Store(driver: driver).alias("tenant")
        try store.write { tx in _ = try tx.park(Item(id: "a", name: "old")) }
        #expect(try store.retrieve(Item.self, id: "a")?.name == "old")
        // Another handle on the same driver drops the alias (its collections and keyspaces:
        // the schema version moves on) and stores a new "a" in a collection made anew.
        let other = try Store(driver: driver)
        try other.dropAlias("tenant")
        try other.alias("tenant").write { tx in _ = try tx.park(Item(id: "a", name: "new")) }
        driver.log.clear()
        #expect(try store.retrieve(Item.self, id: "a")?.name == "new")
        // The speculative read, the version (changed), then the read with what was resolved anew.
        let log = driver.log.entries
        #expect(log.first == "read" && log.dropFirst().first == "version" && log.last == "read" && log.count >= 3, "\(log)")
        // Dropped again: not found from a view that had it.
        try other.dropAlias("tenant")
        #expect(try store.retrieve(Item.self, id: "a") == nil)
        // And the next get reads once more before the version.
        try other.alias("tenant").write { tx in _ = try tx.park(Item(id: "a", name: "again")) }
        #expect(try store.retrieve(Item.self, id: "a")?.name == "again")
        driver.log.clear()
        #expect(try store.retrieve(Item.self, id: "a")?.name == "again")
        #expect(driver.log.entries == ["read", "version"])
    }

    /// Read closures of a reused view after another handle dropped the alias and made its
    /// collection again. The in-memory driver finds keyspaces by name (a stale handle still
    /// reads the new collection), so the log's order shows when the version is checked: a
    /// closure that looks nothing up reads nothing (its check carries over to the next closure);
    /// a scan and a collection by name read the version before anything else; a get reads the
    /// document, then the version, then the document again with what it resolved anew.
    @Test func aReadClosureAfterTheCollectionWasMadeAgainReadsTheNewOne() throws {
        let driver = RecordingDriver(pipelined: true)
        let store = try Store(driver: driver).alias("tenant")
        let other = try Store(driver: driver)
        func remake(_ name: String) throws {
            try other.dropAlias("tenant")
            try other.alias("tenant").write { tx in _ = try tx.park(Item(id: "a", name: name)) }
        }
        func warm() throws {
            #expect(try store.read { tx in try tx.retrieve(Item.self, id: "a") } != nil)
            #expect(try store.read { tx in try tx.document(in: "Item", id: .string("a")) } != nil)
        }
        try store.write { tx in _ = try tx.park(Item(id: "a", name: "old")) }
        try warm()
        try remake("scanned")
        driver.log.clear()
        try store.read { _ in }
        #expect(driver.log.entries == [], "a closure that looks nothing up: \(driver.log.entries)")
        #expect(try store.read { tx in try tx.retrieveAll(Item.self).map(\.name) } == ["scanned"])
        #expect(driver.log.entries.first == "version", "a scan: \(driver.log.entries)")

        try warm()
        try remake("named")
        driver.log.clear()
        #expect(try store.read { tx in try tx.document(in: "Item", id: .string("a")) }?["name"] == .string("named"))
        #expect(driver.log.entries.first == "version", "a collection by name: \(driver.log.entries)")

        try warm()
        try remake("got")
        driver.log.clear()
        #expect(try store.read { tx in try tx.retrieve(Item.self, id: "a")?.name } == "got")
        let log = driver.log.entries
        #expect(log.count >= 3 && log.prefix(2) == ["read", "version"] && log.last == "read", "a get: \(log)")
        try warm()
        try other.dropAlias("tenant")
        #expect(try store.read { tx in try tx.count(Item.self) } == 0)
    }
}

/// An in-memory driver that logs the document layer's reads in order ("version": the schema
/// version; "read": a record read by key) and may claim `pipelinedReads`.
final class RecordingDriver: StorageDriver, @unchecked Sendable {
    let inner = InMemoryDriver()
    let pipelined: Bool
    let log = ReadLog()

    init(pipelined: Bool) { self.pipelined = pipelined }

    var capabilities: StorageCapabilities { pipelined ? inner.capabilities.union(.pipelinedReads) : inner.capabilities }
    var location: String { inner.location }
    func read<R>(_ body: (any StorageTransaction) throws -> R) throws -> R {
        try inner.read { try body(RecordingTransaction(base: $0, log: log)) }
    }
    func write<R>(_ body: (any StorageTransaction) throws -> R) throws -> R {
        try inner.write { try body(RecordingTransaction(base: $0, log: log)) }
    }
}

/// What a ``RecordingDriver``'s read transactions read, in order.
final class ReadLog: Sendable {
    private let state = Mutex<[String]>([])
    var entries: [String] { state.withLock { $0 } }
    func append(_ entry: String) { state.withLock { $0.append(entry) } }
    func clear() { state.withLock { $0.removeAll() } }
}

/// Forwards to `base`, logging reads of read transactions.
final class RecordingTransaction: StorageTransaction {
    let base: any StorageTransaction
    let log: ReadLog

    init(base: any StorageTransaction, log: ReadLog) {
        self.base = base
        self.log = log
    }

    private func note(_ what: String) {
        if base.isReadOnly { log.append(what) }
    }

    var isReadOnly: Bool { base.isReadOnly }
    var maxKeySize: Int { base.maxKeySize }
    var nestingDepth: Int { base.nestingDepth }
    var attachment: AnyObject? {
        get { base.attachment }
        set { base.attachment = newValue }
    }
    func afterCommit(_ handler: @escaping () -> Void) { base.afterCommit(handler) }
    func keyspace(named name: String, create: Bool, multiValue: Bool) throws -> Keyspace? {
        try base.keyspace(named: name, create: create, multiValue: multiValue)
    }
    func withValue<R>(forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        note("read")
        return try base.withValue(forKey: key, in: keyspace, body)
    }
    func readValue(forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace, _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        note("read")
        return try base.readValue(forKey: key, in: keyspace, body)
    }
    func putIfAbsent(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace,
                     existing: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        try base.putIfAbsent(value, forKey: key, in: keyspace, existing: existing)
    }
    func put(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace) throws {
        try base.put(value, forKey: key, in: keyspace)
    }
    func delete(forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace) throws -> Bool { try base.delete(forKey: key, in: keyspace) }
    func delete(forKey key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, in keyspace: Keyspace) throws -> Bool {
        try base.delete(forKey: key, value: value, in: keyspace)
    }
    func scan(_ keyspace: Keyspace, lower: [UInt8]?, upper: [UInt8]?, prefix: [UInt8]?, reverse: Bool,
              _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        try base.scan(keyspace, lower: lower, upper: upper, prefix: prefix, reverse: reverse, body)
    }
    func count(_ keyspace: Keyspace) throws -> Int { try base.count(keyspace) }
    func clear(_ keyspace: Keyspace) throws { try base.clear(keyspace) }
    func drop(_ keyspace: Keyspace) throws { try base.drop(keyspace) }
    func savepoint<R>(_ body: () throws -> R) throws -> R { try base.savepoint(body) }
    func isCurrent(_ keyspace: Keyspace) -> Bool { base.isCurrent(keyspace) }
    var keyspaceHandlesVersion: Int? { base.keyspaceHandlesVersion }
    var snapshotID: UInt64? { base.snapshotID }
    func changeLogStamp() throws -> UInt64? { try base.changeLogStamp() }
    func changeLogHorizon() throws -> UInt64? { try base.changeLogHorizon() }
    func stableValue(forKey key: [UInt8], in keyspace: Keyspace) throws -> [UInt8]? {
        if key == StoreLayout.schemaVersionKey { note("version") }
        return try base.stableValue(forKey: key, in: keyspace)
    }
}
