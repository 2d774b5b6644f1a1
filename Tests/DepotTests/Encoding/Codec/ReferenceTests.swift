@testable import Depot
@testable import DepotCore
import Foundation
import Testing
import DepotTestSupport

struct Author: Codable, Equatable {
    var id: UUID
    var name: String
}

struct Book: Codable, Equatable {
    var title: String
    var author: Author
    var editor: Author?
    var missingEditor: Author?
    var coAuthors: [Author]
    var byRole: [String: Author]
    var byYear: [Int: Author]
}

/// In-memory store: encoding pulls authors out into "authors"; decoding resolves them back.
final class FakeStore: BinaryReferenceEncoding, BinaryReferenceDecoding {
    var records: [String: [DocumentValue: [UInt8]]] = [:]
    var referenceCalls = 0
    var resolveCalls = 0

    func reference(for value: any Encodable) throws -> (collection: String, id: DocumentValue)? {
        referenceCalls += 1
        guard let author = value as? Author else { return nil }
        records["authors", default: [:]][.uuid(author.id)] = try BinaryEncoder().encode(author)
        return ("authors", .uuid(author.id))
    }

    func resolve<T: Decodable>(_ type: T.Type, collection: String, id: DocumentValue) throws -> T {
        resolveCalls += 1
        guard let bytes = records[collection]?[id] else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "dangling reference"))
        }
        return try BinaryDecoder().decode(T.self, from: bytes)
    }
}

@Suite struct ReferenceTests {
    let a1 = Author(id: UUID(), name: "Ann")
    let a2 = Author(id: UUID(), name: "Bob")

    var book: Book {
        Book(title: "T", author: a1, editor: a2, missingEditor: nil, coAuthors: [a2, a1],
             byRole: ["illustrator": a2], byYear: [1999: a1])
    }

    @Test func hooksRoundTrip() throws {
        let store = FakeStore()
        var encoder = BinaryEncoder()
        encoder.referenceHook = store
        let bytes = try encoder.encode(book)
        #expect(store.records["authors"]?.count == 2)
        #expect(store.referenceCalls > 0)

        // The parent holds references, not the authors.
        let tree = try DocumentValue(binary: bytes)
        #expect(tree["author"] == .reference(collection: "authors", id: .uuid(a1.id)))
        #expect(tree[path: "coAuthors[0]"] == .reference(collection: "authors", id: .uuid(a2.id)))
        #expect(tree[path: "byRole.illustrator"] == .reference(collection: "authors", id: .uuid(a2.id)))
        #expect(tree[path: "byYear.1999"] == .reference(collection: "authors", id: .uuid(a1.id)))
        #expect(tree["missingEditor"] == nil)

        var decoder = BinaryDecoder()
        decoder.referenceResolver = store
        #expect(try decoder.decode(Book.self, from: bytes) == book)
        #expect(store.resolveCalls == 6)

        // Without a resolver: typed error with the field path.
        #expect {
            try BinaryDecoder().decode(Book.self, from: bytes)
        } throws: { e in
            (e as? DecodingError)?.fieldPath == "author"
        }
        // The binary tree survives a DocumentValue round trip, references included.
        #expect(try decoder.decode(Book.self, from: tree.binary()) == book)
    }

    @Test func reentrantUseOfSameEncoderAndDecoder() throws {
        final class Reentrant: BinaryReferenceEncoding, BinaryReferenceDecoding {
            var encoder = BinaryEncoder()
            var decoder = BinaryDecoder()
            var stored: [DocumentValue: [UInt8]] = [:]
            func reference(for value: any Encodable) throws -> (collection: String, id: DocumentValue)? {
                guard let a = value as? Author else { return nil }
                stored[.uuid(a.id)] = try encoder.encode(a)  // same encoder instance, nested call
                return ("authors", .uuid(a.id))
            }
            func resolve<T: Decodable>(_ type: T.Type, collection: String, id: DocumentValue) throws -> T {
                try decoder.decode(T.self, from: stored[id]!)  // same decoder instance, nested call
            }
        }
        let r = Reentrant()
        r.encoder.referenceHook = r
        r.decoder.referenceResolver = r
        for _ in 0..<3 {
            let bytes = try r.encoder.encode(book)
            #expect(try r.decoder.decode(Book.self, from: bytes) == book)
        }
        r.encoder.referenceHook = nil  // break the cycle
        r.decoder.referenceResolver = nil
    }

    @Test func rootIsNeverReferenced() throws {
        let store = FakeStore()
        var encoder = BinaryEncoder()
        encoder.referenceHook = store
        let bytes = try encoder.encode(a1)
        #expect(try BinaryDecoder().decode(Author.self, from: bytes) == a1)
        #expect(store.referenceCalls == 0)
    }

    @Test func invalidReferenceIdThrows() throws {
        final class BadHook: BinaryReferenceEncoding {
            func reference(for value: any Encodable) throws -> (collection: String, id: DocumentValue)? {
                value is Author ? ("authors", .array([])) : nil
            }
        }
        var encoder = BinaryEncoder()
        encoder.referenceHook = BadHook()
        #expect(throws: EncodingError.self) { try encoder.encode(book) }
    }

    @Test func referenceJSONForm() throws {
        let v = DocumentValue.reference(collection: "c", id: 5)
        let json = try v.jsonString()
        #expect(json == #"{"$ref":{"collection":"c","id":5}}"#)
        #expect(try DocumentValue(jsonString: json) == v)
    }
}
