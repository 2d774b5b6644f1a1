import DepotTestSupport
import Foundation
import Testing
@testable import Depot
@testable import DepotCore
import DepotLMDB

/// Transactions used to keep their document-layer state alive (transaction ↔ context), which kept
/// the store and its environment open forever: every kind of transaction must let them go.
@Suite("Stores are released")
struct ReleaseTests {
    /// Every kind of transaction, as an enum so that a misspelt one cannot test nothing.
    enum Way: String, CaseIterable, Sendable {
        case read, write, explicit, unitOfWork = "unit of work", failedWrite = "failed write", asyncWrite = "async write"
    }

    @Test(arguments: Way.allCases)
    func aStoreAndItsEnvironmentAreReleased(_ how: Way) async throws {
        let folder = TemporaryFolder()
        weak var weakEnvironment: Environment?
        weak var weakCore: StoreCore?
        do {
            let store = try Store(path: folder.path)
            if how == .asyncWrite {
                try await store.write { tx in try tx.park(SecretNote(id: "n1", text: "x")) }
            } else {
                try Self.exercise(store, how)
            }
            weakEnvironment = try store.environment
            weakCore = store.core
        }
        let deadline = Date().addingTimeInterval(10)
        while (weakCore != nil || weakEnvironment != nil) && Date() < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(weakCore == nil, "\(how): the store core was released")
        #expect(weakEnvironment == nil, "\(how): the environment was released (and closed)")
    }

    /// The synchronous ways (outside an async context, where `write {}` is the synchronous one).
    static func exercise(_ store: Store, _ how: Way) throws {
            switch how {
            case .read: _ = try store.read { try $0.retrieve(SecretNote.self, id: "n1") }
            case .write: try store.write { tx in try tx.park(SecretNote(id: "n1", text: "x")) }
            case .explicit:
                let tx = try store.beginTransaction()
                try tx.park(SecretNote(id: "n1", text: "x"))
                try tx.commit()
            case .unitOfWork:
                store.autosave = false
                try store.park(SecretNote(id: "n1", text: "x"))
                _ = try store.retrieve(SecretNote.self, id: "n1")
                try store.save()
            case .failedWrite:
                struct Boom: Error {}
                _ = try? store.write { tx in
                    try tx.park(SecretNote(id: "n1", text: "x"))
                    throw Boom()
                }
            case .asyncWrite:
                Issue.record("async writes are exercised by the caller, in an async context")
            }
    }

    @Test func anInMemoryStoreIsReleased() throws {
        weak var weakCore: StoreCore?
        do {
            let store = try Store(driver: InMemoryDriver())
            try store.write { tx in try tx.park(SecretNote(id: "n1", text: "x")) }
            _ = try store.read { try $0.retrieve(SecretNote.self, id: "n1") }
            weakCore = store.core
        }
        #expect(weakCore == nil)
    }
}
