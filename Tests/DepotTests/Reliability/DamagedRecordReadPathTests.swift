import DepotLMDB
import DepotTestSupport
import Foundation
import Testing

@testable import Depot
@testable import DepotCore

struct FZUnit: Document, Equatable {
    static var collection: String { "FZUnit" }
    var id: String
    var label: String
}

struct FZMember: Document, Equatable {
    static var collection: String { "FZMember" }
    var id: String
    var name: String
    var level: Int
    var tags: [String]
    var unit: FZUnit?
    var mentor: Reference<FZUnit>?
    static var indexes: [DocumentIndex<FZMember>] { [.init(\.level)] }
}

/// Issue 30 item 3: records altered and re-sealed (a valid checksum) are read through every
/// public read path; each must decode or throw one ``DepotError`` naming alias, collection and
/// ID — never a raw codec error, never a stored value in the message.
@Suite("Damaged records through every read path")
struct DamagedRecordReadPathTests {
    static let iterations = ProcessInfo.processInfo.environment["DEPOT_FUZZ_ITERATIONS"].flatMap(Int.init).map { min($0, 2_000) } ?? 2_000
    /// Every stored string is made of this pattern; no three consecutive characters of it may
    /// appear in an error message.
    static let secret = String(repeating: "Zq9", count: 6)
    static let windows = ["Zq9", "q9Z", "9Zq"]

    private func sampleStore(_ folder: TemporaryFolder, options: StoreOptions = StoreOptions()) throws -> (Store, [String]) {
        let store = try Store(path: folder.path, options: options)
        var ids: [String] = []
        try store.write { tx in
            for i in 0..<12 {
                let id = "m\(i)"
                ids.append(id)
                try tx.park(FZMember(id: id, name: Self.secret, level: i * 7 - 30, tags: [Self.secret, Self.secret + "Z"],
                                     unit: i % 2 == 0 ? FZUnit(id: "u\(i % 3)", label: Self.secret) : nil,
                                     mentor: i % 3 == 0 ? Reference(id: "u1") : nil))
            }
        }
        return (store, ids)
    }

    /// Records what `body` did: decoded, or threw a well-formed typed error.
    private func check(_ path: String, _ outcomes: inout [String: Int], _ body: () throws -> Void) {
        do {
            try body()
            outcomes["\(path): read", default: 0] += 1
        } catch let error as DepotError {
            outcomes["\(path): \(error.code)", default: 0] += 1
            let allowed: [DepotError.Code] = [.corruptRecord, .decodingFailed, .unknownReferenceType, .danglingReference, .referenceCycle]
            #expect(allowed.contains(error.code), "\(path): \(error.code)")
            if error.code != .danglingReference && error.code != .referenceCycle {
                #expect(error.alias == "default" && error.collection != nil && error.id != nil, "\(path): \(error)")
            }
            let texts = [error.message, error.description, error.localizedDescription, error.fieldPath ?? ""]
            let leaked = texts.contains { text in Self.windows.contains { text.contains($0) } }
            #expect(!leaked, "\(path): a stored value in the message: \(error.message)")
        } catch {
            Issue.record("\(path): not a DepotError: \(type(of: error)) \(error)")
        }
    }

    /// Damages one record, re-seals it and reads it through every in-process read path.
    @Test func everyReadPathReportsOneTypedError() throws {
        let folder = TemporaryFolder()
        let (store, ids) = try sampleStore(folder)
        var rng = SplitMix64(seed: 0xDA3A6E)
        var outcomes: [String: Int] = [:]
        struct Discard: Error {}
        _ = try? store.write { tx in
            let txn = try #require(tx.rawLMDBForTests)
            let db = try txn.openDatabase("depot.doc/default/FZMember", key: StringCodec.self, value: BytesCodec.self, create: false)
            for _ in 0..<Self.iterations {
                let id = ids[Int(rng.next() % UInt64(ids.count))]
                let original = try #require(try txn.get(id, in: db))
                var damaged = [UInt8](original.prefix(Record.headerSize)) + RecordFuzzTests().mutate(Array(original.dropFirst(Record.headerSize)), &rng)
                Record.seal(&damaged)
                try txn.put(damaged, forKey: id, in: db)
                check("retrieve", &outcomes) { _ = try tx.retrieve(FZMember.self, id: id) }
                check("retrieveAll", &outcomes) { _ = try tx.retrieveAll(FZMember.self) }
                check("fetch", &outcomes) { _ = try tx.fetch(FetchRequest<FZMember>().matching(\.level, .greaterThan(-1_000))) }
                check("fetch(filter:)", &outcomes) { _ = try tx.fetch(FZMember.self) { _ in true } }
                check("query", &outcomes) { _ = try tx.query(collection: "FZMember", conditions: []) }
                check("document(in:id:)", &outcomes) { _ = try tx.document(in: "FZMember", id: .string(id)) }
                check("retrieve(dynamic:)", &outcomes) { _ = try tx.retrieve(dynamic: "FZMember", id: .string(id)) }
                check("retrieveAll(dynamic:)", &outcomes) { _ = try tx.retrieveAll(dynamic: "FZMember") }
                check("export", &outcomes) { try tx.export(collection: "FZMember") { _ in true } }
                try txn.put(original, forKey: id, in: db)
            }
            throw Discard()
        }
        #expect(try store.retrieveAll(FZMember.self).count == 12, "the store is unchanged")
        #expect(outcomes.keys.contains { $0.hasPrefix("document(in:id:): corruptRecord") }, "the fuzzing reached damaged structure")
        print("damaged records through every read path: \(Self.iterations) mutations: \(outcomes.sorted { $0.key < $1.key })")
    }

    /// A key/value record altered and re-sealed is `.corruptRecord` naming `$kv` and the key.
    @Test func aDamagedKeyValueRecordIsTyped() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        let kv = store.keyValue()
        kv.set([Self.secret, Self.secret], forKey: "k")
        try kv.save()
        try store.write { tx in
            let txn = try #require(tx.rawLMDBForTests)
            let db = try txn.openDatabase("depot.kv/default", key: StringCodec.self, value: BytesCodec.self, create: false)
            var bytes = [UInt8](try #require(try txn.get("k", in: db)).prefix(Record.headerSize)) + [0x01, 0x67, 0x67, 0x67]
            Record.seal(&bytes)
            try txn.put(bytes, forKey: "k", in: db)
        }
        let fresh = try Store(path: folder.path).keyValue()
        fresh.clearCache()
        let error = #expect(throws: DepotError.self) { _ = try fresh.value(forKey: "k", as: [String].self) }
        #expect(error?.code == .corruptRecord && error?.collection == "$kv" && error?.id == "k", "\(String(describing: error))")
    }

    /// A reference whose stored collection was altered (a valid checksum) is reported as
    /// `.unknownReferenceType` naming the holder and the field, not the bytes it holds.
    @Test func aReferenceToAnotherCollectionNamesTheFieldNotTheBytes() throws {
        let folder = TemporaryFolder()
        let (store, _) = try sampleStore(folder)
        try store.write { tx in
            let txn = try #require(tx.rawLMDBForTests)
            let db = try txn.openDatabase("depot.doc/default/FZMember", key: StringCodec.self, value: BytesCodec.self, create: false)
            let original = try #require(try txn.get("m0", in: db))
            // "FZUnit" → "Zq9Zq9": the same length, so the record stays well formed.
            let from = Array("FZUnit".utf8), to = Array("Zq9Zq9".utf8)
            var bytes = original
            var replaced = 0
            var i = Record.headerSize
            while i + from.count <= bytes.count {
                if Array(bytes[i..<(i + from.count)]) == from { bytes.replaceSubrange(i..<(i + from.count), with: to); replaced += 1 }
                i += 1
            }
            #expect(replaced == 2, "the eager and the lazy reference")
            Record.seal(&bytes)
            try txn.put(bytes, forKey: "m0", in: db)
        }
        for read in [{ _ = try store.retrieve(FZMember.self, id: "m0") }, { _ = try store.retrieveAll(FZMember.self) },
                     { _ = try store.read { try $0.fetch(FetchRequest<FZMember>()) } }] as [() throws -> Void] {
            let error = #expect(throws: DepotError.self) { try read() }
            #expect(error?.code == .unknownReferenceType)
            #expect(error?.alias == "default" && error?.collection == "FZMember" && error?.id == "m0")
            #expect(error?.fieldPath == "unit", "\(String(describing: error))")
            #expect(error?.message.contains("Zq9") == false, "\(String(describing: error?.message))")
        }
    }

    /// Damage committed to disk: the verifier and the CLI (export, query, doc get) report it
    /// without a stored value.
    @Test func verifyAndTheCLIReportDamageWithoutStoredValues() throws {
        let depot = try #require(depotExecutable())
        let folder = TemporaryFolder()
        var options = StoreOptions()
        options.environment.unsafeDurability = [.noSync]
        let (store, ids) = try sampleStore(folder, options: options)
        var rng = SplitMix64(seed: 0xC11)
        var failedExports = 0
        for round in 0..<8 {
            let id = ids[round % ids.count]
            try store.write { tx in
                let txn = try #require(tx.rawLMDBForTests)
                let db = try txn.openDatabase("depot.doc/default/FZMember", key: StringCodec.self, value: BytesCodec.self, create: false)
                let original = try #require(try txn.get(id, in: db))
                var damaged = [UInt8](original.prefix(Record.headerSize)) + RecordFuzzTests().mutate(Array(original.dropFirst(Record.headerSize)), &rng)
                Record.seal(&damaged)
                try txn.put(damaged, forKey: id, in: db)
            }
            let env = try store.environment
            let report = try Verifier.verify(env)
            for problem in report.problems {
                #expect(!Self.windows.contains { problem.contains($0) }, "verify: \(problem)")
            }
            let export = try runProcess(depot, ["export", "--path", folder.path])
            #expect(export.status == 0 || export.status == 1, "export ends with a status, not a signal: \(export.status)")
            #expect(!Self.windows.contains { export.err.contains($0) }, "export: \(export.err)")
            for arguments in [["query", "--path", folder.path, "--collection", "FZMember", "--where", "level > -1000"],
                              ["doc", "get", "--path", folder.path, "--collection", "FZMember", "--id", id]] {
                let result = try runProcess(depot, arguments)
                #expect(result.status == 0 || result.status == 1, "\(arguments[0]): \(result.status)")
                #expect(!Self.windows.contains { result.err.contains($0) }, "\(arguments[0]): \(result.err)")
            }
            if export.status != 0 {
                failedExports += 1
                #expect(export.err.contains("FZMember"), "export names the collection: \(export.err)")
            }
        }
        #expect(failedExports > 0, "the damage was noticed")
    }
}
