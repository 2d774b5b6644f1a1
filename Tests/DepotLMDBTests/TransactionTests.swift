import Foundation
import Testing
import DepotTestSupport
@testable import DepotLMDB

private struct Boom: Error {}

@Suite("Transactions")
struct TransactionTests {
    let folder = TemporaryFolder()
    let env: Environment
    let db: Database<StringCodec, StringCodec>

    init() throws {
        env = try Environment.open(path: folder.path)
        db = try env.openDatabase("t", key: StringCodec.self, value: StringCodec.self)
    }

    @Test func writeCommitsAndReturnsValue() throws {
        let n = try env.write { txn -> Int in
            try txn.put("1", forKey: "a", in: db)
            try txn.put("2", forKey: "b", in: db)
            return 2
        }
        #expect(n == 2)
        #expect(try env.read { try $0.get("b", in: db) } == "2")
    }

    /// The raw read reads what the typed one does and checks keys the same way.
    @Test func rawReadsMatchTypedReads() throws {
        try env.write { txn in try txn.put("value", forKey: "key", in: db) }
        try env.read { txn in
            var seen: [UInt8] = []
            let found = try Array("key".utf8).withUnsafeBytes { key in
                try txn.withRawValue(forKey: key, dbi: db.dbi, database: "t") { seen = Array($0) }
            }
            #expect(found && seen == Array("value".utf8))
            let absent = try Array("nope".utf8).withUnsafeBytes { key in
                try txn.withRawValue(forKey: key, dbi: db.dbi, database: "t") { _ in Issue.record("called for an absent key") }
            }
            #expect(!absent)
            for bad in [[UInt8](), [UInt8](repeating: 0x61, count: env.maxKeySize + 1)] {
                let error = #expect(throws: LMDBError.self) {
                    try bad.withUnsafeBytes { key in try txn.withRawValue(forKey: key, dbi: db.dbi, database: "t") { _ in } }
                }
                #expect(error?.code == LMDBError.badValueSize.code && error?.database == "t")
            }
        }
    }

    @Test func throwInsideWriteLeavesNothing() throws {
        #expect(throws: Boom.self) {
            try env.write { txn throws in
                try txn.put("1", forKey: "a", in: db)
                throw Boom()
            }
        }
        #expect(try env.read { try $0.get("a", in: db) } == nil)
        #expect(try env.read { try $0.count(db) } == 0)
    }

    @Test func childAbortKeepsParentWork() throws {
        try env.write { txn throws in
            try txn.put("parent", forKey: "p", in: db)
            _ = try? txn.nested { child throws in
                try child.put("child", forKey: "c", in: db)
                #expect(try child.get("c", in: db) == "child")
                throw Boom()
            }
            #expect(try txn.get("c", in: db) == nil)
            try txn.nested { try $0.put("kept", forKey: "k", in: db) }
        }
        try env.read { txn throws in
            #expect(try txn.get("p", in: db) == "parent")
            #expect(try txn.get("c", in: db) == nil)
            #expect(try txn.get("k", in: db) == "kept")
        }
    }

    @Test func nestedWriteOnSameThreadIsAClearError() throws {
        let error = #expect(throws: LMDBError.deadlock) {
            try env.write { _ in try env.write { _ in } }
        }
        _ = error
        var caught: LMDBError?
        try env.write { _ in
            do { try env.write { _ in } } catch let e as LMDBError { caught = e }
        }
        #expect(caught?.description.contains("nested") == true)
    }

    @Test func useAfterEndIsAnError() throws {
        var escaped: Transaction?
        try env.read { escaped = $0 }
        let error = #expect(throws: LMDBError.badTransaction) { _ = try escaped!.get("a", in: db) }
        #expect(error?.description.contains("already ended") == true)
    }

    @Test func aReadReusesItsObjectOnlyWhenNothingKeptIt() throws {
        try env.write { try $0.put("1", forKey: "a", in: db) }
        // Nothing kept the first read's transaction: the thread's next read renews that object.
        let first = try env.read { ObjectIdentifier($0) }
        let second = try env.read { ObjectIdentifier($0) }
        #expect(first == second)
        // A kept transaction stays ended while later reads on this thread run.
        var kept: Transaction?
        try env.read { kept = $0 }
        let later = try env.read { txn throws -> ObjectIdentifier in
            #expect(try txn.get("a", in: db) == "1")
            return ObjectIdentifier(txn)
        }
        guard let kept else { Issue.record("the read did not run"); return }
        #expect(later != ObjectIdentifier(kept))
        #expect(!kept.isActive)
        #expect(throws: LMDBError.badTransaction) { _ = try kept.get("a", in: db) }
        // An explicit read ends into the cache too, and a later read still sees new data.
        let explicit = try env.beginTransaction(readOnly: true)
        #expect(try explicit.get("a", in: db) == "1")
        explicit.abort()
        try env.write { try $0.put("2", forKey: "a", in: db) }
        #expect(try env.read { try $0.get("a", in: db) } == "2")
        #expect(!explicit.isActive)
    }

    @Test func explicitTransactionsRefuseMisuse() throws {
        let txn = try env.beginTransaction()
        try txn.put("v", forKey: "explicit", in: db)
        try txn.commit()
        #expect(throws: LMDBError.badTransaction) { try txn.commit() }
        #expect(throws: LMDBError.badTransaction) { try txn.put("w", forKey: "explicit", in: db) }
        txn.abort() // harmless after commit
        #expect(try env.read { try $0.get("explicit", in: db) } == "v")

        let aborted = try env.beginTransaction()
        try aborted.put("x", forKey: "gone", in: db)
        aborted.abort()
        #expect(try env.read { try $0.get("gone", in: db) } == nil)

        // A dropped explicit transaction is aborted and releases the writer.
        do {
            let dropped = try env.beginTransaction()
            try dropped.put("y", forKey: "dropped", in: db)
        }
        try env.write { try $0.put("z", forKey: "after", in: db) }
        #expect(try env.read { try $0.get("dropped", in: db) } == nil)

        try env.write { txn throws in
            _ = #expect(throws: LMDBError.badTransaction) { try txn.commit() }
        }
    }

    @Test func readSeesOneSnapshot() throws {
        try env.write { try $0.put("old", forKey: "s", in: db) }
        let reader = try env.beginTransaction(readOnly: true)
        try env.write { try $0.put("new", forKey: "s", in: db) }
        #expect(try reader.get("s", in: db) == "old")
        try reader.commit()
        #expect(try env.read { try $0.get("s", in: db) } == "new")
    }

    @Test func readOnlyTransactionCannotWrite() throws {
        try env.read { txn throws in
            #expect(throws: LMDBError.permissionDenied) { try txn.put("x", forKey: "x", in: db) }
            #expect(throws: LMDBError.invalidArgument) { try txn.nested { _ in } }
        }
    }

    @Test func zeroCopyAndDeleteAndFlags() throws {
        try env.write { txn throws in
            try txn.put("hello", forKey: "k", in: db)
            let length = try txn.withValue(forKey: "k", in: db) { $0.count }
            #expect(length == 5)
            #expect(try txn.withValue(forKey: "missing", in: db) { $0.count } == nil)
            #expect(try txn.contains("k", in: db))
            #expect(try txn.delete("k", in: db))
            #expect(try txn.delete("k", in: db) == false)
            try txn.putReserving(count: 3, forKey: "r", in: db) { buffer in
                buffer.copyBytes(from: Array("abc".utf8))
            }
            #expect(try txn.get("r", in: db) == "abc")
        }
    }

    @Test func keySizeLimitsCheckedBeforeLMDB() throws {
        try env.write { txn throws in
            let empty = #expect(throws: LMDBError.badValueSize) { try txn.put("v", forKey: "", in: db) }
            #expect(empty?.description.contains("empty") == true)
            let long = String(repeating: "k", count: 512)
            let tooLong = #expect(throws: LMDBError.badValueSize) { try txn.put("v", forKey: long, in: db) }
            #expect(tooLong?.description.contains("512 bytes") == true)
            try txn.put("v", forKey: String(repeating: "k", count: 511), in: db)
            #expect(throws: LMDBError.badValueSize) { _ = try txn.get("", in: db) }
        }
    }

    @Test func clearAndDropDatabases() throws {
        try env.write { txn throws in
            let other = try txn.openDatabase("other", key: StringCodec.self, value: StringCodec.self)
            try txn.put("1", forKey: "a", in: other)
            try txn.put("1", forKey: "a", in: db)
        }
        try env.write { txn in try txn.clear(db) }
        #expect(try env.read { try $0.count(db) } == 0)
        let other = try env.openDatabase("other", key: StringCodec.self, value: StringCodec.self, create: false)
        try env.write { txn in try txn.drop(other) }
        #expect(throws: LMDBError.notFound) {
            _ = try env.openDatabase("other", key: StringCodec.self, value: StringCodec.self, create: false)
        }
        #expect(try env.databaseNames() == ["t"])
    }

    @Test func databaseCreatedInAbortedWriteDisappears() throws {
        _ = try? env.write { txn throws in
            let temp = try txn.openDatabase("temp", key: StringCodec.self, value: StringCodec.self)
            try txn.put("x", forKey: "x", in: temp)
            throw Boom()
        }
        #expect(throws: LMDBError.notFound) { _ = try env.openDatabase("temp", create: false) }
        let temp = try env.openDatabase("temp", key: StringCodec.self, value: StringCodec.self)
        #expect(try env.read { try $0.get("x", in: temp) } == nil)
    }
}

@Suite("Databases first opened inside a read transaction")
struct ReadOpenTests {
    @Test func readTransactionCanOpenAnExistingDatabase() throws {
        let folder = TemporaryFolder()
        do {
            let env = try Environment.open(path: folder.path)
            let db = try env.openDatabase("late", key: StringCodec.self, value: StringCodec.self)
            try env.write { try $0.put("v", forKey: "k", in: db) }
        }
        // A fresh environment: the handle is not cached yet; open it inside a read.
        let env = try Environment.open(path: folder.path)
        let value = try env.read { txn -> String? in
            let db = try txn.openDatabase("late", key: StringCodec.self, value: StringCodec.self, create: false)
            return try txn.get("k", in: db)
        }
        #expect(value == "v")
        // And again: now cached, usable by later transactions from any thread.
        let again = try env.read { txn in
            try txn.get("k", in: try txn.openDatabase("late", key: StringCodec.self, value: StringCodec.self, create: false))
        }
        #expect(again == "v")
        #expect(throws: LMDBError.notFound) {
            try env.read { txn in _ = try txn.openDatabase("absent", key: StringCodec.self, value: StringCodec.self, create: false) }
        }
        // A writer can still create databases afterwards (the open lock was released).
        try env.write { txn in _ = try txn.openDatabase("new", key: StringCodec.self, value: StringCodec.self) }
    }
}
