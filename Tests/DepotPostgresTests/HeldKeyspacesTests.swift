#if Postgres
@testable import DepotPostgres
import Testing

/// The keyspaces a write under key locks holds, searched one by one while few and by an index
/// past ``HeldKeyspaces/indexedFrom``: both answer alike.
@Suite("Held keyspaces")
struct HeldKeyspacesTests {
    @Test(arguments: [1, HeldKeyspaces.indexedFrom, HeldKeyspaces.indexedFrom + 1, 200])
    func locksChecksAndUseAreKeptPerKeyspace(count: Int) {
        var held = HeldKeyspaces()
        // IDs out of order, and some never touched (even ones).
        let ids = (0..<count).map { Int32(($0 * 37) % 1_000) * 2 + 1 }
        for (n, id) in ids.enumerated() {
            #expect(held.lock(id) == nil)
            if n % 3 == 0 {
                // Locked ahead of use, shared, not checked yet.
                held.setLock(id, exclusive: false)
                held.setUnverified(id, true)
            } else {
                held.use(id)
                held.setLock(id, exclusive: n % 3 == 2)
            }
        }
        for (n, id) in ids.enumerated() {
            #expect(held.lock(id) == (n % 3 == 0 ? false : n % 3 == 2), "keyspace \(id)")
            #expect(held.isUnverified(id) == (n % 3 == 0), "keyspace \(id)")
            #expect(held.lock(id + 1) == nil)
            #expect(!held.isUnverified(id + 1))
        }
        #expect(held.unverified == Set(ids.enumerated().filter { $0.offset % 3 == 0 }.map(\.element)))
        #expect(held.usedShared() == ids.enumerated().filter { $0.offset % 3 == 1 }.map(\.element).sorted())
        // A check clears one keyspace only; checking a keyspace never locked adds nothing.
        held.setUnverified(ids[0], false)
        held.setUnverified(-5, false)
        #expect(!held.isUnverified(ids[0]))
        #expect(held.unverified.count == (count + 2) / 3 - 1)
        #expect(held.lock(-5) == nil)
        // An upgrade to exclusive leaves the shared list.
        if count > 1 {
            held.setLock(ids[1], exclusive: true)
            #expect(!held.usedShared().contains(ids[1]))
        }
        // A savepoint rolled back: no lock or check left, use remembered (and locks taken again).
        held.releaseLocks()
        #expect(held.unverified.isEmpty)
        #expect(ids.allSatisfy { held.lock($0) == nil })
        #expect(held.usedShared().isEmpty)
        for id in ids { held.setLock(id, exclusive: false) }
        #expect(held.usedShared() == ids.enumerated().filter { $0.offset % 3 != 0 }.map(\.element).sorted())
    }
}
#endif
