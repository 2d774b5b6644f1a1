import DepotTestSupport
import Foundation
import Testing
@testable import Depot
@testable import DepotCore

struct Firm: Document, Equatable {
    var id: String
    var name: String
    var founder: Reference<Worker>?
    var staff: [Reference<Worker>] = []
}

struct Worker: Document, Equatable {
    var id: String
    var name: String
    var firm: Reference<Firm>
    var mentor: Reference<Worker>?
    static var indexes: [DocumentIndex<Worker>] { [.init(\.firm)] }
}

struct Badge2: Document, Equatable {
    static var collection: String { "Badge2" }
    var id: String
    var holder: Reference<Worker>?
}

@Suite("Lazy references, inverses and delete rules")
struct ReferenceGraphTests {
    let folder = TemporaryFolder()
    let store: Store
    init() throws { store = try Store(path: folder.path) }

    private func seedGraph() throws -> Firm {
        var firm = Firm(id: "acme", name: "Acme")
        let ada = Worker(id: "ada", name: "Ada", firm: Reference(firm), mentor: nil)
        let bob = Worker(id: "bob", name: "Bob", firm: Reference(firm), mentor: Reference(ada))
        firm.founder = Reference(ada)
        firm.staff = [Reference(ada), Reference(bob)]
        try store.write { tx in
            try tx.park(firm)
            try tx.park(ada)
            try tx.park(bob)
            try tx.park(Worker(id: "eve", name: "Eve", firm: Reference(id: "other"), mentor: nil))
        }
        return firm
    }

    @Test func aCyclicGraphRoundTrips() throws {
        let firm = try seedGraph()
        try store.read { tx throws in
            let read = try #require(try tx.retrieve(Firm.self, id: "acme"))
            #expect(read == firm)
            let founderReference = try #require(read.founder)
            let founder = try #require(try tx.resolve(founderReference))
            #expect(founder.name == "Ada")
            #expect(try tx.resolve(founder.firm) == firm, "founder → firm → founder: a cycle, read lazily")
            #expect(try read.staff.map { try tx.resolve($0)?.name } == ["Ada", "Bob"])
            #expect(try tx.resolve(Reference<Firm>(id: "missing")) == nil)
        }
        // Stored as references, never as copies.
        let workers = try store.read { tx in try exported(tx, "Worker") }
        #expect(workers.first { $0.id == .string("bob") }?.document["mentor"] == .reference(collection: "Worker", id: .string("ada")))
    }

    @Test func inverseLookupsReadTheReferenceIndex() throws {
        let firm = try seedGraph()
        try store.read { tx throws in
            #expect(try tx.documents(Worker.self, referencing: firm, via: \.firm).map(\.id) == ["ada", "bob"])
            let plan = try tx.execute(FetchRequest<Worker>().matching(\.firm, .equalTo(Reference(firm))))
            #expect(plan.plan.usedIndex)
            #expect(try tx.documents(Worker.self, referencing: Firm(id: "other", name: ""), via: \.firm).map(\.id) == ["eve"])
        }
        store.registerFetchRequest("firmStaff", for: Worker.self, variables: ["firm": .document(Firm.self)]) { vars in
            FetchRequest<Worker>().matching(\.firm, .equalTo(Reference(try vars.document("firm", as: Firm.self))))
        }
        let named = try store.read { try $0.fetch(named: "firmStaff", as: Worker.self, substitutions: ["firm": firm]) }
        #expect(named.map(\.id) == ["ada", "bob"])
    }

    @Test func deleteRulesCascadeNullifyAndDeny() throws {
        let firm = try seedGraph()
        try store.write { tx in try tx.park(Badge2(id: "b1", holder: Reference(id: "bob"))) }
        // Default: deleting never follows references.
        try store.write { tx in _ = try tx.delete(Worker.self, id: "eve") }
        #expect(try store.read { try $0.count(Worker.self) } == 2)

        try store.registerDeleteRule(.deny, from: Worker.self, via: \.firm)
        let denied = #expect(throws: DepotError.self) { try store.write { tx in _ = try tx.delete(firm) } }
        #expect(denied?.code == .deleteDenied)
        #expect(try store.read { try $0.exists(Firm.self, id: "acme") })

        try store.registerDeleteRule(.cascade, from: Worker.self, via: \.firm)
        store.registerDeleteRule(.nullify, from: Badge2.self, via: \.holder)
        store.registerDeleteRule(.nullify, from: Worker.self, via: \.mentor)
        try store.write { tx in _ = try tx.delete(firm) }
        try store.read { tx throws in
            #expect(try tx.count(Firm.self) == 0)
            #expect(try tx.count(Worker.self) == 0, "the firm's workers were deleted with it")
            #expect(try tx.retrieve(Badge2.self, id: "b1")?.holder == nil, "the badge of a deleted worker lost its holder")
            #expect(try tx.fetch(FetchRequest<Worker>().matching(\.firm, .equalTo(Reference(firm)))).isEmpty)
        }
    }

    @Test func anOwnerCascadesToTheDocumentsItReferences() throws {
        _ = try seedGraph()
        try store.write { tx in try tx.park(Badge2(id: "b1", holder: Reference(id: "bob"))) }
        // The owner's side: deleting the firm deletes its staff (an array of references) and,
        // through the rule on the badge, nullifies what referenced the deleted workers.
        store.registerCascade(from: Firm.self, via: \.staff)
        store.registerDeleteRule(.nullify, from: Badge2.self, via: \.holder)
        // Without the rule, deleting a worker leaves the firm; the cascade is one-directional.
        #expect(try store.write { tx in try tx.delete(Worker.self, id: "eve") })
        #expect(try store.read { try $0.exists(Firm.self, id: "acme") })
        #expect(try store.write { tx in try tx.delete(Firm.self, id: "acme") })
        try store.read { tx throws in
            #expect(try tx.count(Firm.self) == 0)
            #expect(try tx.count(Worker.self) == 0, "ada and bob went with the firm")
            #expect(try tx.retrieve(Badge2.self, id: "b1")?.holder == nil, "the owned documents' own rules applied")
        }
    }

    @Test func ownerCascadesFollowChainsStopAtCyclesAndSkipMissingTargets() throws {
        // Schemaless collections: a ring of three that each own the next, plus a dangling link.
        let kinds = ["A", "B", "C"]
        try store.write { tx in
            for (i, kind) in kinds.enumerated() {
                let next = kinds[(i + 1) % kinds.count]
                _ = try tx.put(document: .object(pairs: [
                    ("next", .reference(collection: next, id: .string("1"))),
                    ("gone", .array([.reference(collection: "Nowhere", id: .string("x")),
                                     .reference(collection: next, id: .string("missing"))])),
                ]),
                               in: kind, id: .string("1"))
            }
            _ = try tx.put(document: .object(pairs: [("keep", .bool(true))]), in: "A", id: .string("2"))
        }
        for kind in kinds {
            try store.registerCascade(fromCollection: kind, field: "next")
            try store.registerCascade(fromCollection: kind, field: "gone")
        }
        #expect(try store.write { tx in try tx.deleteDocument(in: "B", id: .string("1")) })
        try store.read { tx throws in
            for kind in kinds { #expect(try tx.document(in: kind, id: .string("1")) == nil, "\(kind)/1 went round the ring once") }
            #expect(try tx.document(in: "A", id: .string("2")) != nil, "an unreferenced document stays")
        }
        #expect(throws: DepotError.self) { try store.registerCascade(fromCollection: "", field: "next") }
        #expect(throws: DepotError.self) { try store.registerCascade(fromCollection: "A", field: "") }
    }
}
