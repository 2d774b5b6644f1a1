#if Crypto
import Crypto
import Depot
import DepotCrypto
import DepotLMDB
import DepotTestSupport
import Foundation
import Testing

/// Issue 29: `depot` (built with the `Crypto` trait) on a store sealed with `AESGCMTransform`:
/// the key from `--key-file` or `DEPOT_KEY`, never from an argument; a wrong key is a clear error
/// that prints neither records nor the key.
@Suite("depot with the key of an encrypted store")
struct CryptoCLITests {
    struct Secret: Document, Equatable {
        var id: String
        var text: String
        var rank: Int
    }

    let folder = TemporaryFolder("depot-crypto-cli")
    var path: String { folder.sub("store") }
    let key = SymmetricKey(size: .bits256)
    var keyBytes: Data { key.withUnsafeBytes { Data($0) } }

    /// A store of 40 documents and one key/value entry sealed with `key` under key ID `id`.
    func makeStore(id: UInt8 = 1, at path: String? = nil) throws {
        var options = StoreOptions()
        options.recordTransform = try AESGCMTransform(keys: [id: key], current: id)
        let store = try Store(path: path ?? self.path, options: options)
        try store.write { tx in for i in 0..<40 { try tx.park(Secret(id: "s\(i)", text: "classified \(i)", rank: i)) } }
        let kv = store.keyValue()
        kv["token"] = "hidden-token"
        try kv.save()
    }

    /// Writes the key as a file: raw bytes, or base64 text.
    func keyFile(base64: Bool = false, bytes: Data? = nil) throws -> String {
        let file = folder.sub(base64 ? "key.b64" : "key.bin")
        let data = bytes ?? keyBytes
        try (base64 ? Data((data.base64EncodedString() + "\n").utf8) : data).write(to: URL(fileURLWithPath: file))
        return file
    }

    @Test func exportQueryAndDocGetDecryptWithTheKey() throws {
        try makeStore()
        for keyOption in [["--key-file", try keyFile()], ["--key-file", try keyFile(base64: true)]] {
            let export = try depot(["export", "--path", path] + keyOption)
            #expect(export.status == 0, "\(export)")
            #expect(export.out.split(separator: "\n").count == 40 && export.out.contains("classified 7"), "\(export)")
        }
        let environment = ["DEPOT_KEY": keyBytes.base64EncodedString()]
        let query = try depot(["query", "--path", path, "--collection", "Secret", "--where", "rank >= 38"], environment: environment)
        #expect(query.status == 0 && query.out.split(separator: "\n").count == 2, "\(query)")
        let got = try depot(["doc", "get", "--path", path, "--collection", "Secret", "--id", "s7"], environment: environment)
        #expect(got.status == 0 && got.out.contains("classified 7"), "\(got)")
        let kv = try depot(["kv", "get", "--path", path, "token"], environment: environment)
        #expect(kv.status == 0 && kv.out == "\"hidden-token\"\n", "\(kv)")
    }

    @Test func writesWithTheKeyStaySealed() throws {
        try makeStore()
        let environment = ["DEPOT_KEY": keyBytes.base64EncodedString()]
        let put = try depot(["doc", "put", "--path", path, "--collection", "Secret", "--id", "s99", #"{"text": "written by the cli", "rank": 99}"#],
                            environment: environment)
        #expect(put.status == 0, "\(put)")
        #expect(try depot(["kv", "set", "--path", path, "motto", "sealed too"], environment: environment).status == 0)
        var options = StoreOptions()
        options.recordTransform = try AESGCMTransform(keys: [1: key], current: 1)
        let store = try Store(path: path, options: options)
        #expect(try store.read { try $0.retrieve(Secret.self, id: "s99") } == Secret(id: "s99", text: "written by the cli", rank: 99))
        let file = try Data(contentsOf: URL(fileURLWithPath: path + "/data.mdb"))
        #expect(file.range(of: Data("written by the cli".utf8)) == nil && file.range(of: Data("sealed too".utf8)) == nil,
                "nothing readable on disk")
    }

    @Test func verifyChecksEveryRecordWithTheKey() throws {
        try makeStore()
        let verify = try depot(["verify", "--path", path, "--key-file", try keyFile()])
        #expect(verify.status == 0, "\(verify)")
        #expect(verify.out.contains("40 encrypted records decrypted with the key and checked"), "\(verify.out)")
        #expect(!verify.out.contains("could not be checked"), "\(verify.out)")
        let json = try depot(["verify", "--path", path, "--json"], environment: ["DEPOT_KEY": keyBytes.base64EncodedString()])
        let report = try JSONDecoder().decode(VerificationReport.self, from: Data(json.out.utf8))
        #expect(report.isClean && report.totalOpened == 40 && report.totalSealed == 0 && report.totalDocuments == 40, "\(json)")
        // Without the key: checked as far as possible, never called damaged.
        let without = try depot(["verify", "--path", path])
        #expect(without.status == 0 && without.out.contains("40 encrypted records could not be checked without the key"), "\(without)")
    }

    @Test func aWrongKeyIsAClearErrorWithoutSecrets() throws {
        try makeStore()
        let wrong = Data(SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) })
        let environment = ["DEPOT_KEY": wrong.base64EncodedString()]
        for command in [["export"], ["doc", "get", "--collection", "Secret", "--id", "s7"], ["query", "--collection", "Secret"], ["kv", "get", "token"]] {
            let run = try depot(command + ["--path", path], environment: environment)
            #expect(run.status == 1, "\(command): \(run)")
            #expect(run.err.contains("does not open with the given key"), "\(command): \(run.err)")
            #expect(!run.err.contains("classified") && !run.err.contains("hidden-token"), "\(command): no stored value")
            #expect(!run.err.contains(wrong.base64EncodedString()) && !run.err.contains(keyBytes.base64EncodedString()), "\(command): no key")
        }
        let json = try depot(["export", "--path", path, "--json"], environment: environment)
        let object = try JSONSerialization.jsonObject(with: Data(json.err.utf8)) as? [String: Any]
        #expect((object?["error"] as? [String: Any])?["code"] as? String == "transformFailed", "\(json.err)")
        let verify = try depot(["verify", "--path", path], environment: environment)
        #expect(verify.status == 1 && verify.err.contains("the key opens none of the 40 encrypted records"), "\(verify)")
        #expect(!verify.err.contains("damaged:"), "a wrong key is not damage: \(verify.err)")
        // The key ID the records were sealed with matters: --key-id names it.
        let third = folder.sub("key-id-3")
        try makeStore(id: 3, at: third)
        let otherID = try depot(["export", "--path", third, "--key-file", try keyFile()])
        #expect(otherID.status == 1 && otherID.err.contains("--key-id"), "\(otherID)")
        #expect(try depot(["export", "--path", third, "--key-file", try keyFile(), "--key-id", "3"]).status == 0)
    }

    @Test func aKeyOfTheWrongSizeIsNamedNotPrinted() throws {
        try makeStore()
        let short = try keyFile(bytes: Data("0123456789abcdef".utf8))
        let run = try depot(["export", "--path", path, "--key-file", short])
        #expect(run.status == 1 && run.err.contains("the key file '\(short)'") && run.err.contains("256"), "\(run)")
        #expect(!run.err.contains("0123456789abcdef"), "the key's bytes are never printed")
        let missing = try depot(["export", "--path", path, "--key-file", folder.sub("nope")])
        #expect(missing.status == 1 && missing.err.contains("cannot read the key file"), "\(missing)")
        let badEnvironment = try depot(["export", "--path", path], environment: ["DEPOT_KEY": "not base64 at all!"])
        #expect(badEnvironment.status == 1 && badEnvironment.err.contains("DEPOT_KEY") && !badEnvironment.err.contains("not base64"), "\(badEnvironment)")
    }
}
#endif
