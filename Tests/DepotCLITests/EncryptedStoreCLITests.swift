import Depot
import DepotLMDB
import DepotTestSupport
import Foundation
import Testing

/// A stand-in for `AESGCMTransform` (product DepotCrypto, trait `Crypto`): the marker that tells a sealed
/// record from a damaged one is written by the store, whatever the transform.
private struct XORTransform: RecordTransform, Equatable {
    let key: UInt8
    func seal(_ record: UnsafeRawBufferPointer, context: RecordTransformContext) throws -> [UInt8] { [0x01] + record.map { $0 ^ key } }
    func open(_ stored: UnsafeRawBufferPointer, context: RecordTransformContext) throws -> [UInt8] {
        guard stored.first == 0x01 else { throw CocoaError(.coderReadCorrupt) }
        return stored.dropFirst().map { $0 ^ key }
    }
}

/// Issue 29: a sound encrypted store opened without its key is encrypted, never damaged.
@Suite("depot on an encrypted store")
struct EncryptedStoreCLITests {
    let folder = TemporaryFolder("depot-encrypted")
    var path: String { folder.path }

    struct Secret: Document, Equatable {
        var id: String
        var text: String
    }

    /// A store of 40 sealed documents and one sealed key/value entry.
    func makeStore() throws {
        var options = StoreOptions()
        options.recordTransform = XORTransform(key: 0x5A)
        let store = try Store(path: path, options: options)
        try store.write { tx in for i in 0..<40 { try tx.park(Secret(id: "s\(i)", text: "secret \(i)")) } }
        let kv = store.keyValue()
        kv["token"] = "hidden"
        try kv.save()
        #expect(try store.read { tx in try tx.retrieve(Secret.self, id: "s7") } == Secret(id: "s7", text: "secret 7"))
    }

    @Test func verifyCountsEncryptedRecordsAndCallsNothingDamaged() throws {
        try makeStore()
        let verify = try depot("verify", "--path", path)
        #expect(verify.status == 0, "\(verify.out)\(verify.err)")
        #expect(verify.out.contains("40 encrypted records could not be checked without the key"), "\(verify.out)")
        #expect(!(verify.out + verify.err).contains("damaged:") && !verify.err.contains("problem"), "\(verify.err)")
        let json = try depot("verify", "--path", path, "--json")
        #expect(json.status == 0)
        let report = try JSONDecoder().decode(VerificationReport.self, from: Data(json.out.utf8))
        #expect(report.totalSealed == 40 && report.isClean)
    }

    @Test func verifyStillFindsDamageBesideEncryptedRecords() throws {
        try makeStore()
        // A sealed record that lost everything after its marker is damaged.
        let env = try Environment.open(path: path, options: EnvironmentOptions(maxDatabases: 1024))
        let db = try env.openDatabase("depot.doc/default/Secret", key: StringCodec.self, value: BytesCodec.self, create: false)
        try env.write { try $0.put([0xE5], forKey: "s3", in: db) }
        let verify = try depot("verify", "--path", path)
        #expect(verify.status == 1)
        #expect(verify.err.contains("key 's3'") && verify.err.contains("holds nothing after its marker"), "\(verify.err)")
        #expect(verify.out.contains("39 encrypted records"), "\(verify.out)")
    }

    @Test func exportAndDocGetSayAKeyIsNeeded() throws {
        try makeStore()
        for run in [try depot("export", "--path", path), try depot("doc", "get", "--path", path, "--collection", "Secret", "--id", "s7")] {
            #expect(run.status == 1)
            #expect(run.err.contains("is encrypted") && run.err.contains("key"), "\(run.err)")
            #expect(!run.err.contains("damaged") && !run.err.contains("checksum"), "\(run.err)")
            #expect(!run.err.contains("secret"), "no stored value in a message")
        }
        let json = try depot("export", "--path", path, "--json")
        let object = try JSONSerialization.jsonObject(with: Data(json.err.utf8)) as? [String: Any]
        #expect((object?["error"] as? [String: Any])?["code"] as? String == "transformRequired", "\(json.err)")
        let kv = try depot("kv", "get", "--path", path, "token")
        #expect(kv.status == 1 && kv.err.contains("is encrypted"), "\(kv.err)")
    }

    @Test func theRefusalNamesTheStoreAndHowToPassTheKey() throws {
        try makeStore()
        for command in [["export"], ["doc", "get", "--collection", "Secret", "--id", "s7"], ["query", "--collection", "Secret"]] {
            let run = try depot(command + ["--path", path])
            #expect(run.status == 1, "\(command): \(run)")
            #expect(run.err.contains("'\(path)' is encrypted"), "\(command): names the store: \(run.err)")
            #expect(run.err.contains("--key-file") && run.err.contains("DEPOT_KEY"), "\(command): says how to pass the key: \(run.err)")
            #if !Crypto
            #expect(run.err.contains("--traits Crypto"), "\(command): says the build cannot decrypt: \(run.err)")
            #endif
        }
        let verify = try depot("verify", "--path", path)
        #expect(verify.out.contains("--key-file"), "verify says how to check the encrypted records: \(verify.out)")
    }

    @Test func theKeyIsNeverAPlainArgument() throws {
        try makeStore()
        let run = try depot("export", "--path", path, "--key", "c2VjcmV0")
        #expect(run.status == 64, "\(run)")
        #expect(!run.out.contains("secret"))
    }

    #if !Crypto
    @Test func aKeyGivenToABuildWithoutCryptoIsAClearError() throws {
        try makeStore()
        let keyFile = folder.sub("key")
        try Data(repeating: 7, count: 32).write(to: URL(fileURLWithPath: keyFile))
        for run in [try depot("export", "--path", path, "--key-file", keyFile),
                    try depot(["doc", "get", "--path", path, "--collection", "Secret", "--id", "s7"], environment: ["DEPOT_KEY": Data(repeating: 7, count: 32).base64EncodedString()])] {
            #expect(run.status == 1, "\(run)")
            #expect(run.err.contains("without the Crypto trait") && run.err.contains("--traits Crypto"), "\(run.err)")
        }
        // verify checks what it can, and says why the key was not used.
        let verify = try depot("verify", "--path", path, "--key-file", keyFile)
        #expect(verify.status == 0, "\(verify)")
        #expect(verify.err.contains("without the Crypto trait"), "\(verify.err)")
        #expect(verify.out.contains("40 encrypted records could not be checked without the key"), "\(verify.out)")
    }
    #endif

    @Test func theLibraryWithoutTheTransformSaysTheSame() throws {
        try makeStore()
        let store = try Store(environment: Environment.open(path: path, options: EnvironmentOptions(maxDatabases: 1024)))
        #expect { try store.read { tx in try tx.retrieve(Secret.self, id: "s7") } } throws: { ($0 as? DepotError)?.code == .transformRequired }
    }

    @Test func recordsSealedBeforeTheMarkerStillOpen() throws {
        try makeStore()
        // The transform's output alone, as stores wrote it before the marker.
        do {
            let env = try Environment.open(path: path, options: EnvironmentOptions(maxDatabases: 1024))
            let db = try env.openDatabase("depot.doc/default/Secret", key: StringCodec.self, value: BytesCodec.self, create: false)
            try env.write { txn in
                let stored = try #require(try txn.get("s7", in: db))
                #expect(stored.first == 0xE5)
                try txn.put(Array(stored.dropFirst()), forKey: "s7", in: db)
            }
        }
        var options = StoreOptions()
        options.recordTransform = XORTransform(key: 0x5A)
        let child = try runProcess(try #require(depotExecutable()), ["verify", "--path", path])
        #expect(child.status == 1, "without the marker a tool cannot tell: reported as damaged, as before")
        let store = try Store(path: path, options: options)
        #expect(try store.read { tx in try tx.retrieve(Secret.self, id: "s7") } == Secret(id: "s7", text: "secret 7"))
    }
}
