#if Crypto
import Crypto
import Depot
import DepotCrypto
import DepotLMDB
import Foundation
import Testing

struct Diary: Document, Equatable {
    var id: String
    var entry: String
}

@Suite("AES-GCM record transform")
struct AESGCMTransformTests {
    let folder: String = {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("depot-crypto-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }()

    private func environment() throws -> Environment {
        var options = EnvironmentOptions()
        options.maxDatabases = 1024
        return try Environment.open(path: folder, options: options)
    }

    @Test func encryptsOnDiskRotatesKeysAndRefusesAWrongKey() throws {
        let secret = "dear diary: the vault code is 4711"
        let old = SymmetricKey(size: .bits256), new = SymmetricKey(size: .bits256)
        do {
            let env = try environment()
            let store = try Store(environment: env, recordTransform: try AESGCMTransform(keys: [1: old], current: 1))
            try store.write { tx in try tx.park(Diary(id: "d1", entry: secret)) }
            let kv = store.keyValue()
            kv["note"] = secret
            try kv.save()
            #expect(try store.read { try $0.retrieve(Diary.self, id: "d1") }?.entry == secret)
            try env.close()
        }
        let file = try Data(contentsOf: URL(fileURLWithPath: folder + "/data.mdb"))
        #expect(file.range(of: Data(secret.utf8)) == nil, "nothing readable on disk")
        // Rotation: the new key seals, the old one still opens old records.
        do {
            let env = try environment()
            let store = try Store(environment: env, recordTransform: try AESGCMTransform(keys: [1: old, 2: new], current: 2))
            #expect(try store.read { try $0.retrieve(Diary.self, id: "d1") }?.entry == secret)
            try store.write { tx in try tx.park(Diary(id: "d2", entry: "second")) }
            try env.close()
        }
        // Without the old key, old records are a clear error naming the record; new ones open.
        let env = try environment()
        let store = try Store(environment: env, recordTransform: try AESGCMTransform(keys: [2: new], current: 2))
        #expect(try store.read { try $0.retrieve(Diary.self, id: "d2") }?.entry == "second")
        let error = #expect(throws: DepotError.self) { _ = try store.read { try $0.retrieve(Diary.self, id: "d1") } }
        #expect(error?.code == .transformFailed)
        #expect(error?.collection == "Diary" && error?.id == "d1")
        #expect(error.map { "\($0)" }?.contains(secret) == false)
        try env.close()
    }

    @Test func badKeysAreRefusedAndNeverPrinted() throws {
        #expect(throws: AESGCMTransform.Failure.keySize(id: 1, bits: 128)) { _ = try AESGCMTransform(keys: [1: SymmetricKey(size: .bits128)], current: 1) }
        #expect(throws: AESGCMTransform.Failure.unknownCurrentKey(2)) { _ = try AESGCMTransform(keys: [1: SymmetricKey(size: .bits256)], current: 2) }
        let key = SymmetricKey(size: .bits256)
        let transform = try AESGCMTransform(keys: [7: key], current: 7)
        let material = key.withUnsafeBytes { Data($0).base64EncodedString() }
        #expect("\(transform)" == "AESGCMTransform(keys: [7], current: 7)")
        #expect(!"\(transform)".contains(material))
    }
}
#endif
