import DepotLMDB
import Foundation
import Testing
import DepotTestSupport
@testable import Depot
@testable import DepotCore

/// A stored value that must never appear in an error message.
let secret = "TOP-SECRET-7f3a9"

struct Vault: Document, Equatable {
    var id: String
    var owner: String
    var code: String
    var pin: Int
    var nested: [[String]] = []
}

/// The same collection read with other field types.
struct VaultAsUUID: Document { static var collection: String { "Vault" }; var id: String; var owner: String; var code: UUID }
struct VaultAsDate: Document { static var collection: String { "Vault" }; var id: String; var owner: String; var code: Date }
struct VaultAsDecimal: Document { static var collection: String { "Vault" }; var id: String; var owner: String; var code: Decimal }
struct VaultPinAsInt8: Document { static var collection: String { "Vault" }; var id: String; var pin: Int8 }
struct VaultAsInt: Document { static var collection: String { "Vault" }; var id: String; var code: Int }

/// A value nested deeper than the format allows, with the secret at the bottom.
indirect enum Deep: Codable { case leaf(String), node(Deep) }
struct DeepDoc: Document { var id: String; var deep: Deep }
struct Chain: Codable { var text: String; var next: [Chain] }
struct ChainDoc: Document { var id: String; var chain: Chain }

@Suite("Error messages never contain stored values")
struct SecretsTests {
    let folder = TemporaryFolder()
    let store: Store

    init() throws {
        store = try Store(path: folder.path)
        try store.write { tx in try tx.park(Vault(id: "v1", owner: secret, code: secret, pin: 987_654_321)) }
    }

    func expectNoSecret(_ error: (any Error)?, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        guard let error else {
            Issue.record("\(what): expected an error", sourceLocation: sourceLocation)
            return
        }
        let text = "\(error)" + String(describing: error) + String(reflecting: error)
        #expect(!text.contains(secret), "\(what): \(text)", sourceLocation: sourceLocation)
        #expect(!text.contains("987654321"), "\(what): \(text)", sourceLocation: sourceLocation)
    }

    @Test func decodingAsTheWrongTypeNamesThePlaceNotTheValue() throws {
        for (what, read) in [
            ("UUID", { _ = try store.retrieve(VaultAsUUID.self, id: "v1") }),
            ("Date", { _ = try store.retrieve(VaultAsDate.self, id: "v1") }),
            ("Decimal", { _ = try store.retrieve(VaultAsDecimal.self, id: "v1") }),
            ("Int8", { _ = try store.retrieve(VaultPinAsInt8.self, id: "v1") }),
            ("Int", { _ = try store.retrieve(VaultAsInt.self, id: "v1") }),
        ] as [(String, () throws -> Void)] {
            let error = #expect(throws: DepotError.self, "\(what)") { try read() }
            expectNoSecret(error, what)
            if let error, error.code == .decodingFailed {
                #expect(error.alias == "default" && error.collection == "Vault" && error.id == "v1", "\(what)")
                #expect(error.fieldPath == (what == "Int8" ? "pin" : "code"), "\(what): \(error.fieldPath ?? "-")")
            } else {
                Issue.record("\(what): expected decodingFailed, got \(String(describing: error))")
            }
        }
        #expect(try store.retrieve(Vault.self, id: "v1")?.code == secret, "failed reads change nothing")
    }

    @Test func encodingFailureDoesNotEchoTheDocument() throws {
        var deep = Deep.leaf(secret)
        for _ in 0..<2000 { deep = .node(deep) }
        let value = deep
        let error = #expect(throws: DepotError.self) { try store.write { tx in try tx.park(DeepDoc(id: "d", deep: value)) } }
        expectNoSecret(error, "encodingFailed (enum)")
        #expect(try store.count(DeepDoc.self) == 0)
        var chain = Chain(text: secret, next: [])
        for _ in 0..<2000 { chain = Chain(text: secret, next: [chain]) }
        let long = chain
        let chainError = #expect(throws: DepotError.self) { try store.write { tx in try tx.park(ChainDoc(id: "c", chain: long)) } }
        expectNoSecret(chainError, "encodingFailed (struct)")
        #expect(try store.count(ChainDoc.self) == 0)
    }

    @Test func damagedRecordsAndConflictsDoNotEchoValues() throws {
        // A flipped byte: checksum mismatch.
        try damageStoredRecord(store, collection: "Vault", id: "v1", fromEnd: 2, mask: 0x40)
        expectNoSecret(#expect(throws: DepotError.self) { _ = try store.retrieve(Vault.self, id: "v1") }, "checksum")
        expectNoSecret(#expect(throws: DepotError.self) { try store.read { tx in try tx.export { _ in true } } }, "export")
        // A conditional write that finds another revision.
        let conflict = #expect(throws: DepotError.self) {
            try store.write { tx in try tx.park(Vault(id: "v1", owner: secret, code: secret, pin: 1), ifRevision: 7) }
        }
        expectNoSecret(conflict, "revisionConflict")
    }

    @Test func bindingErrorsDoNotEchoValues() throws {
        let env = try store.environment
        let db = try env.openDatabase("kv", key: StringCodec.self, value: StringCodec.self)
        try env.write { try $0.put(secret, forKey: "k", in: db) }
        expectNoSecret(#expect(throws: LMDBError.keyExists) {
            try env.write { try $0.put(secret, forKey: "k", in: db, flags: .noOverwrite) }
        }, "keyExists")
        let dups = try env.openDatabase("dups", key: StringCodec.self, value: StringCodec.self, flags: .dupSort)
        let big = secret + String(repeating: "x", count: 600)
        expectNoSecret(#expect(throws: LMDBError.badValueSize) { try env.write { try $0.put(big, forKey: "k", in: dups) } }, "dupSort value")
    }
}

@Suite("Bad input is refused and changes nothing")
struct BadInputTests {
    @Test func dupSortValueOver511BytesIsRefused() throws {
        let folder = TemporaryFolder()
        let env = try Environment.open(path: folder.path)
        let dups = try env.openDatabase("dups", key: StringCodec.self, value: StringCodec.self, flags: .dupSort)
        try env.write { try $0.put("small", forKey: "k", in: dups) }
        let error = #expect(throws: LMDBError.badValueSize) {
            try env.write { txn in
                try txn.put("another", forKey: "k", in: dups)
                try txn.put(String(repeating: "v", count: 512), forKey: "k", in: dups)
            }
        }
        #expect(error?.database == "dups")
        #expect(try env.read { try $0.count(dups) } == 1, "the whole transaction was rolled back")
        try env.write { try $0.put(String(repeating: "v", count: 511), forKey: "k", in: dups) }
        #expect(try env.read { try $0.count(dups) } == 2)
    }

    @Test func closedEnvironmentAndStoreRefuseEverything() throws {
        let folder = TemporaryFolder()
        let env = try Environment.open(path: folder.path)
        let store = try Store(environment: env)
        let db = try env.openDatabase("d", key: StringCodec.self, value: StringCodec.self)
        try store.write { tx in try tx.park(Department(id: "d1", name: "Ops")) }
        try env.close()
        let attempts: [(String, () throws -> Void)] = [
            ("read", { _ = try env.read { try $0.get("k", in: db) } }),
            ("write", { try env.write { try $0.put("v", forKey: "k", in: db) } }),
            ("begin", { _ = try env.beginTransaction() }),
            ("begin read", { _ = try env.beginTransaction(readOnly: true) }),
            ("open database", { _ = try env.openDatabase("other") }),
            ("stat", { _ = try env.stat() }),
            ("sync", { try env.sync() }),
            ("copy", { try env.copy(to: folder.path + "-copy") }),
            ("store read", { _ = try store.retrieve(Department.self, id: "d1") }),
            ("store write", { try store.park(Department(id: "d2", name: "x")) }),
            ("store transaction", { _ = try store.beginTransaction() }),
        ]
        for (what, attempt) in attempts {
            let error = #expect(throws: (any Error).self, "\(what)") { try attempt() }
            #expect("\(error.map { "\($0)" } ?? "")".contains("closed"), "\(what): \(String(describing: error))")
        }
        #expect(!FileManager.default.fileExists(atPath: folder.path + "-copy/data.mdb"))
        // Reopened: the data is as it was.
        let again = try Store(path: folder.path)
        #expect(try again.retrieve(Department.self, id: "d1")?.name == "Ops")
        #expect(try again.count(Department.self) == 1)
    }

    @Test func invalidAliasesAndCollectionsAreClearErrors() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        for name in ["", "a/b", String(repeating: "x", count: 101), "tab\there"] {
            let error = #expect(throws: DepotError.self) { _ = try store.alias(name) }
            #expect(error?.description.contains("invalid alias name") == true)
        }
        #expect(try store.aliases() == [])
        #expect(try store.alias("Never").count(Department.self) == 0, "an alias that holds nothing reads as empty")
        #expect(try store.aliases() == [], "reading an unknown alias creates nothing")
    }

    @Test func emptyAndOversizedIDsNameTheCollection() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        let empty = #expect(throws: DepotError.self) { try store.write { tx in try tx.park(Department(id: "", name: "Ops")) } }
        #expect(empty?.code == .invalidKey)
        #expect(empty?.description.contains("the ID of a document in collection 'Department' is empty") == true, "\(String(describing: empty))")
        let long = String(repeating: "k", count: 600)
        let oversized = #expect(throws: DepotError.self) { try store.write { tx in try tx.park(Department(id: long, name: "Ops")) } }
        #expect(oversized?.description.contains("collection 'Department' is 600 bytes; the limit is 511") == true, "\(String(describing: oversized))")
        #expect(oversized?.description.contains(long) == false, "the ID itself is not echoed")
        #expect(try store.count(Department.self) == 0)
    }
}
