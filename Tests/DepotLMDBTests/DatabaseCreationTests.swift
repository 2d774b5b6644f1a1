import Foundation
import Synchronization
import Testing
import DepotTestSupport
@testable import DepotLMDB

/// Databases created while readers run: a reader whose snapshot holds a new database can open
/// it (LMDB publishes a handle only after the commit has written its meta page, so a read
/// transaction begun between the two would see the database without a usable handle).
@Suite("Databases created under readers")
struct DatabaseCreationTests {
    /// Each write creates a database and records its number in a database opened before; the
    /// readers, spinning, open the database their snapshot records (so some begin while the
    /// creating write commits).
    @Test func aReaderOpensEveryDatabaseItsSnapshotHolds() throws {
        let folder = TemporaryFolder()
        let env = try Environment.open(path: folder.path, options: EnvironmentOptions(maxDatabases: 512))
        let meta = try env.openDatabase("meta", key: StringCodec.self, value: StringCodec.self)
        let stop = Atomic<Bool>(false)
        let failures = Mutex<[String]>([])
        let opened = Atomic<Int>(0)
        let group = DispatchGroup()
        for _ in 0..<3 {
            group.enter()
            Thread {
                defer { group.leave() }
                while !stop.load(ordering: .acquiring) {
                    do {
                        try env.read { txn in
                            guard let latest = try txn.get("latest", in: meta) else { return }
                            let db = try txn.openDatabase("d\(latest)", key: StringCodec.self, value: StringCodec.self, create: false)
                            if try txn.get("k", in: db) != latest { failures.withLock { $0.append("d\(latest): wrong value") } }
                            opened.add(1, ordering: .relaxed)
                        }
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                        return
                    }
                }
            }.start()
        }
        for i in 0..<300 {
            try env.write { txn in
                let db = try txn.openDatabase("d\(i)", key: StringCodec.self, value: StringCodec.self)
                try txn.put("\(i)", forKey: "k", in: db)
                try txn.put("\(i)", forKey: "latest", in: meta)
            }
        }
        stop.store(true, ordering: .releasing)
        group.wait()
        #expect(failures.withLock { $0 } == [])
        #expect(opened.load(ordering: .relaxed) > 0)
    }
}
