import DepotTestSupport
import Foundation
import Testing
@testable import Depot
@testable import DepotCore
import DepotLMDB

/// A toy transform for the hook's tests (not encryption): XOR with a key byte, bound to the
/// record's place by a checksum, so a wrong key or a moved record does not open.
struct ToyTransform: RecordTransform, Equatable {
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

/// `SecretNote`'s collection, tracking sync status.
struct SyncedSecretNote: Syncable, Equatable {
    static var collection: String { SecretNote.collection }
    var id: String
    var text: String
    var syncStatus: SyncStatus = .notSynced
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

    /// A handle opened without the key wrote plain records into a sealed store (replacing
    /// sealed ones with readable text that the key's holder could not read): the store records
    /// that it is sealed, and such a handle cannot write.
    @Test func aHandleWithoutTheTransformCannotWriteASealedStore() throws {
        do {
            let store = try open(0x5A)
            try store.write { tx in try tx.park(SecretNote(id: "n1", text: "sealed")) }
        }
        let plain = try Store(path: folder.path)
        for (number, write) in ([{ try plain.write { tx in _ = try tx.park(SecretNote(id: "n1", text: "CLEARTEXT")) } },
                      { try plain.write { tx in _ = try tx.park(SecretNote(id: "n2", text: "CLEARTEXT")) } },
                      { let kv = plain.keyValue(); kv["pin"] = "CLEARTEXT"; try kv.save() }] as [() throws -> Void]).enumerated() {
            let error = #expect(throws: DepotError.self, "write \(number)") { try write() }
            #expect(error?.code == .transformRequired, "\(number): \(String(describing: error))")
        }
        #expect(throws: DepotError.self) { _ = try plain.read { try $0.retrieve(SecretNote.self, id: "n1") } }
        // A schema change is a write too: tracking sync status would rebuild the sync index
        // from sealed records this handle cannot read.
        let schema = #expect(throws: DepotError.self) { try plain.write { tx in _ = try tx.count(SyncedSecretNote.self) } }
        #expect(schema?.code == .transformRequired, "\(String(describing: schema))")
        let data = try Data(contentsOf: URL(fileURLWithPath: folder.path + "/data.mdb"))
        #expect(data.range(of: Data("CLEARTEXT".utf8)) == nil, "no plain record was written")
    }

    /// The seal is the store's once its transaction commits: a first sealing write rolled back
    /// (after a second collection had read its own marker) left this process sure the store
    /// was sealed, so the next write did not seal it; a seal made in a savepoint that was rolled
    /// back was made again without a schema-version bump. Both seal it now.
    @Test func aRolledBackSealIsMadeAgain() throws {
        struct Stop: Error {}
        for rollback in ["transaction", "savepoint"] {
            let folder = TemporaryFolder()
            do {
                var options = StoreOptions()
                options.recordTransform = ToyTransform(keyByte: 0x33)
                let store = try Store(path: folder.path, options: options)
                if rollback == "transaction" {
                    #expect(throws: Stop.self) {
                        try store.write { tx in
                            try tx.park(SecretNote(id: "a", text: "x"))
                            let kv = try tx.alias("other")
                            try kv.park(SecretNote(id: "b", text: "y"))
                            throw Stop()
                        }
                    }
                    try store.write { tx in try tx.park(SecretNote(id: "c", text: "z")) }
                } else {
                    try store.write { tx in
                        _ = try? tx.savepoint { try tx.park(SecretNote(id: "a", text: "x")); throw Stop() }
                        try tx.park(SecretNote(id: "c", text: "z"))
                    }
                }
            }
            let plain = try Store(path: folder.path)
            let error = #expect(throws: DepotError.self, "\(rollback)") { try plain.write { tx in try tx.park(SecretNote(id: "d", text: "CLEARTEXT")) } }
            #expect(error?.code == .transformRequired, "\(rollback): \(String(describing: error))")
            // Deleting is writing too, for documents and key/value entries.
            #expect(throws: DepotError.self) { try plain.write { tx in _ = try tx.delete(SecretNote.self, id: "c") } }
        }
    }

    /// A second handle in the process with another key had it ignored (records sealed and
    /// opened with the first handle's); one without a transform after a plain one switched
    /// the plain handle to sealing. Handles of one store share one transform now.
    @Test func handlesOfOneStoreShareOneTransform() throws {
        let first = try open(0x11)
        try first.write { tx in try tx.park(SecretNote(id: "n1", text: "a")) }
        #expect(try open(0x11).read { try $0.retrieve(SecretNote.self, id: "n1") }?.text == "a", "an equal transform")
        let other = #expect(throws: DepotError.self) { _ = try open(0x22) }
        #expect(other?.code == .transformMismatch, "\(String(describing: other))")
        let none = #expect(throws: DepotError.self) { _ = try Store(path: folder.path) }
        #expect(none?.code == .transformMismatch)

        let plainFolder = TemporaryFolder()
        let plain = try Store(path: plainFolder.path)
        try plain.write { tx in try tx.park(SecretNote(id: "p", text: "plain")) }
        var options = StoreOptions()
        options.recordTransform = ToyTransform(keyByte: 0x11)
        let keyed = #expect(throws: DepotError.self) { _ = try Store(path: plainFolder.path, options: options) }
        #expect(keyed?.code == .transformMismatch)
        #expect(try plain.read { try $0.retrieve(SecretNote.self, id: "p") }?.text == "plain")
        try plain.write { tx in try tx.park(SecretNote(id: "q", text: "still plain")) }
    }

    /// A plain store opened with a transform reported each plain record as "wrong key, or
    /// damaged": it says now that the record is not sealed (and names it, not its content).
    @Test func aPlainRecordReadWithATransformIsNamedAsNotSealed() throws {
        do {
            let plain = try Store(path: folder.path)
            try plain.write { tx in try tx.park(SecretNote(id: "p", text: "plain text")) }
        }
        let keyed = try open(0x11)
        let error = #expect(throws: DepotError.self) { _ = try keyed.read { try $0.retrieve(SecretNote.self, id: "p") } }
        #expect(error?.code == .transformFailed)
        #expect(error?.collection == "SecretNote" && error?.id == "p")
        #expect(error?.message.contains("not sealed") == true, "\(String(describing: error))")
        #expect(error?.message.contains("wrong key") == false)
        #expect(error?.message.contains("plain text") == false)
    }
}
