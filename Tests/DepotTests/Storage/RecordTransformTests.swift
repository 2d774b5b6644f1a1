import DepotTestSupport
import Foundation
import Testing
@testable import Depot
@testable import DepotCore
import DepotLMDB

/// A toy transform for the hook's tests (not encryption): XOR with a key byte, bound to the
/// record's place by a checksum, so a wrong key or a moved record does not open.
struct ToyTransform: RecordTransform {
    var keyByte: UInt8
    var allowsPlaintextIndexes = false
    struct Refused: Error {}

    private func tag(_ plain: [UInt8], _ context: RecordTransformContext) -> UInt32 {
        CRC32C.checksum(plain + Array(context.keyspace.utf8) + [0] + context.key + [keyByte])
    }

    func seal(_ record: UnsafeRawBufferPointer, context: RecordTransformContext) throws -> [UInt8] {
        let plain = [UInt8](record)
        var out: [UInt8] = [0xEE] + plain.map { $0 ^ keyByte }
        withUnsafeBytes(of: tag(plain, context).littleEndian) { out.append(contentsOf: $0) }
        return out
    }

    func open(_ stored: UnsafeRawBufferPointer, context: RecordTransformContext) throws -> [UInt8] {
        guard stored.count >= 5, stored[0] == 0xEE else { throw Refused() }
        let plain = stored[1..<(stored.count - 4)].map { $0 ^ keyByte }
        let found = stored.loadUnaligned(fromByteOffset: stored.count - 4, as: UInt32.self)
        guard UInt32(littleEndian: found) == tag(plain, context) else { throw Refused() }
        return plain
    }
}

struct SecretNote: Document, Equatable {
    var id: String
    var text: String
}

@Suite("Record transforms")
struct RecordTransformTests {
    let folder = TemporaryFolder()

    private func open(_ key: UInt8) throws -> Store {
        var options = StoreOptions()
        options.recordTransform = ToyTransform(keyByte: key)
        return try Store(path: folder.path, options: options)
    }

    @Test func recordsAreTransformedOnDiskAndReadBack() throws {
        let secret = "the launch code is 0000"
        do {
            let store = try open(0x5A)
            try store.write { tx in try tx.park(SecretNote(id: "n1", text: secret)) }
            let kv = store.keyValue()
            kv["pin"] = secret
            try kv.save()
            #expect(try store.read { try $0.retrieve(SecretNote.self, id: "n1") }?.text == secret)
            #expect(store.keyValue()["pin"] as String? == secret)
            // Reopening without a transform while it is open is refused.
            #expect(throws: DepotError.self) { _ = try Store(path: folder.path) }
        }
        let data = try Data(contentsOf: URL(fileURLWithPath: folder.path + "/data.mdb"))
        #expect(data.range(of: Data(secret.utf8)) == nil, "no plaintext in the file")
        #expect(data.range(of: Data("n1".utf8)) != nil, "IDs stay readable (they are keys)")
    }

    @Test func aWrongKeyIsAClearErrorAndIndexesAreRefused() throws {
        var options = EnvironmentOptions()
        options.maxDatabases = 1024
        let environment = try Environment.open(path: folder.path, options: options)
        do {
            let store = try Store(environment: environment, recordTransform: ToyTransform(keyByte: 0x11))
            try store.write { tx in try tx.park(SecretNote(id: "n1", text: "secret text")) }
            let refused = #expect(throws: DepotError.self) { try store.write { tx in try tx.park(staff(1)) } }
            #expect(refused?.code == .invalidIndex, "index keys would leak field values")
        }
        try environment.close()
        let reopened = try Environment.open(path: folder.path, options: options)
        let other = try Store(environment: reopened, recordTransform: ToyTransform(keyByte: 0x22))
        let error = #expect(throws: DepotError.self) { _ = try other.read { try $0.retrieve(SecretNote.self, id: "n1") } }
        #expect(error?.code == .transformFailed)
        #expect(error?.collection == "SecretNote" && error?.id == "n1")
        #expect(error?.message.contains("secret") == false)
    }
}
