import Depot
import DepotTestSupport
import Foundation
import Testing

/// `depot doc put` writes only what the library reads back (issue 29, item 3).
@Suite("depot doc put: IDs")
struct DocPutIDTests {
    let folder = TemporaryFolder("depot-doc-id")
    var path: String { folder.path }

    struct Employee: Document, Equatable {
        var id: Int
        var name: String
    }

    @Test func aBodyWithoutItsIDGetsItFilledIn() throws {
        let store = try Store(path: path)
        try store.write { tx in try tx.park(Employee(id: 1, name: "Ada")) }
        let put = try depot("doc", "put", "--path", path, "--collection", "Employee", "--id", "9", #"{"name": "Grace"}"#)
        #expect(put.status == 0, "\(put.err)")
        // Every full fetch of the Swift type still decodes.
        #expect(try store.read { tx in try tx.retrieveAll(Employee.self) } == [Employee(id: 1, name: "Ada"), Employee(id: 9, name: "Grace")])
        #expect(try depot("doc", "get", "--path", path, "--collection", "Employee", "--id", "9").out == #"{"id":9,"name":"Grace"}"# + "\n")
    }

    @Test func aBodyWhoseIDDisagreesIsRefused() throws {
        let put = try depot("doc", "put", "--path", path, "--collection", "Employee", "--id", "9", #"{"id": 10, "name": "Grace"}"#)
        #expect(put.status == 1)
        #expect(put.err.contains("--id '9' differs from the document's 'id' field"), "\(put.err)")
        let exported = try depot("export", "--path", path)
        #expect(exported.out.isEmpty, "nothing was stored")
        let agreeing = try depot("doc", "put", "--path", path, "--collection", "Employee", "--id", "9", #"{"id": 9, "name": "Grace"}"#)
        #expect(agreeing.status == 0, "\(agreeing.err)")
    }

    @Test func anIDKeepsItsText() throws {
        let put = try depot("doc", "put", "--path", path, "--collection", "Part", "--id", "00123", #"{"name": "bolt"}"#)
        #expect(put.status == 0, "\(put.err)")
        let exported = try depot("export", "--path", path)
        #expect(exported.out == #"{"collection":"Part","id":"00123","document":{"id":"00123","name":"bolt"}}"# + "\n", "\(exported.out)")
        let collections = try depot("collections", "--path", path, "--json")
        #expect(collections.out.contains(#""idKind":"string""#), "\(collections.out)")
        #expect(try depot("doc", "get", "--path", path, "--collection", "Part", "--id", "00123").status == 0)
    }

    @Test func aNumericCollectionReadsTheTextAsANumber() throws {
        let store = try Store(path: path)
        try store.write { tx in try tx.park(Employee(id: 1, name: "Ada")) }
        let put = try depot("doc", "put", "--path", path, "--collection", "Employee", "--id", "00123", #"{"name": "Bob"}"#)
        #expect(put.status == 0, "\(put.err)")
        #expect(try store.read { tx in try tx.retrieve(Employee.self, id: 123) } == Employee(id: 123, name: "Bob"))
        // A negative ID follows --id as it is (it was taken for an option: "Missing value for '--id'").
        #expect(try depot("doc", "put", "--path", path, "--collection", "Employee", "--id", "-7", #"{"name": "Neg"}"#).status == 0)
        let negative = try depot("doc", "get", "--path", path, "--collection", "Employee", "--id", "-7")
        #expect(negative.status == 0 && negative.out.contains("Neg"), "\(negative.err)")
        #expect(try depot("doc", "delete", "--path", path, "--collection", "Employee", "--id", "-7").status == 0)
    }

    @Test func theIDKindNeverChangesSilently() throws {
        let store = try Store(path: path)
        try store.write { tx in try tx.park(Employee(id: 1, name: "Ada")) }
        let text = try depot("doc", "put", "--path", path, "--collection", "Employee", "--id", "e7", #"{"name": "Eve"}"#)
        #expect(text.status == 1)
        #expect(text.err.contains("collection 'Employee' has signed IDs") && text.err.contains("'e7' is not an integer"), "\(text.err)")
        // An integer too large for the collection's IDs says so (it is an integer).
        let large = try depot("doc", "get", "--path", path, "--collection", "Employee", "--id", "9223372036854775808")
        #expect(large.status == 1)
        #expect(large.err.contains("'9223372036854775808' is out of the collection's integer range"), "\(large.err)")
        let body = try depot("doc", "put", "--path", path, "--collection", "Employee", #"{"id": "e7", "name": "Eve"}"#)
        #expect(body.status == 1)
        #expect(body.err.contains("collection 'Employee' has signed IDs") && body.err.contains("is a string ID"), "\(body.err)")
        let collections = try depot("collections", "--path", path, "--json")
        #expect(collections.out.contains(#""idKind":"signed""#))
        #expect(try store.read { tx in try tx.retrieveAll(Employee.self) }.count == 1)
    }
}
