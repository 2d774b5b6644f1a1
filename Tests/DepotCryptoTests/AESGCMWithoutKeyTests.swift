#if Crypto
import Crypto
import Depot
import DepotCrypto
import DepotLMDB
import Foundation
import Testing

/// Issue 29: an AES-GCM store read without its key is encrypted, never damaged.
@Suite("AES-GCM store without the key")
struct AESGCMWithoutKeyTests {
    let folder: String = {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("depot-crypto-nokey-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }()

    @Test func theREADMESnippetWritesAStoreThatVerifiesWithoutTheKey() throws {
        // The README's snippet, as written there.
        let key = SymmetricKey(size: .bits256)              // keep it in a keychain or secret store
        var options = StoreOptions()
        options.recordTransform = try AESGCMTransform(keys: [1: key], current: 1)
        do {
            let store = try Store(path: folder, options: options)
            try store.write { tx in for i in 0..<40 { try tx.park(Diary(id: "d\(i)", entry: "entry \(i)")) } }
        }
        var environmentOptions = EnvironmentOptions()
        environmentOptions.maxDatabases = 1024
        let env = try Environment.open(path: folder, options: environmentOptions)
        let report = try Verifier.verify(env)
        #expect(report.isClean, "\(report.problems)")
        #expect(report.totalSealed == 40 && report.totalDocuments == 0)
        let store = try Store(environment: env)
        let error = #expect(throws: DepotError.self) { _ = try store.read { try $0.retrieve(Diary.self, id: "d1") } }
        #expect(error?.code == .transformRequired)
        #expect(error.map { "\($0)" }?.contains("entry") == false)
        try env.close()
    }
}
#endif
