import Depot
import DepotLMDB
import Foundation
import Testing
import DepotTestSupport

struct Blob: Document {
    var id: Int
    var bytes: [UInt8]
    var checksum: UInt32
}

/// MiB written through the document layer by `growsFrom1MiBWithoutAFailedWrite`
/// (`DEPOT_MAP_GROWTH_MIB` overrides; RELIABILITY.md has the 200 MiB figure).
let mapGrowthMiB = ProcessInfo.processInfo.environment["DEPOT_MAP_GROWTH_MIB"].flatMap(Int.init) ?? 200

@Suite("Map growth through the document layer")
struct DocumentMapGrowthTests {
    @Test func growsFrom1MiBWithoutAFailedWrite() throws {
        let folder = TemporaryFolder("depot-growth")
        var options = StoreOptions()
        options.environment.mapSize = 1 << 20
        let store = try Store(path: folder.path, options: options)
        let blobSize = 64 << 10, perTransaction = 32
        let blobs = mapGrowthMiB * (1 << 20) / blobSize
        let started = DispatchTime.now()
        var id = 0
        while id < blobs {
            let first = id, last = min(id + perTransaction, blobs)
            let batch = (first..<last).map { n -> Blob in
                let bytes = [UInt8](repeating: UInt8(truncatingIfNeeded: n &* 31), count: blobSize - 8) + withUnsafeBytes(of: n) { Array($0) }
                return Blob(id: n, bytes: bytes, checksum: CRC32C.checksum(bytes))
            }
            // No error may reach the caller: the map grows (and the closure re-runs) inside write.
            try store.write { tx in try tx.park(batch) }
            id = last
        }
        let written = milliseconds(since: started)
        let info = try store.environment.info()
        #expect(info.mapSize >= mapGrowthMiB << 20)
        var read = 0
        try store.read { tx in
            try tx.forEach(Blob.self) { blob in
                #expect(blob.id == read && CRC32C.checksum(blob.bytes) == blob.checksum, "blob \(blob.id)")
                read += 1
                return true
            }
        }
        #expect(read == blobs)
        print("map growth: \(mapGrowthMiB) MiB in \(blobs) documents from a 1 MiB map to \(info.mapSize >> 20) MiB: written in \(String(format: "%.1f", written / 1000)) s, all read back and checked in \(String(format: "%.1f", milliseconds(since: started) / 1000 - written / 1000)) s")
    }

    @Test func adoptsAMapGrownByAnotherProcess() throws {
        let exe = try #require(depotExecutable())
        let folder = TemporaryFolder("depot-adopt")
        var options = StoreOptions()
        options.environment.mapSize = 256 << 10
        let store = try Store(path: folder.path, options: options)
        try store.write { tx in try tx.park(Blob(id: -1, bytes: [1, 2, 3], checksum: CRC32C.checksum([1, 2, 3]))) }
        let before = try store.environment.info().mapSize
        // Another process writes ~6 MiB of documents from a map of the same small size: it grows the map.
        let other = try runToEnd(exe, ["torture", "--path", folder.path, "--mode", "documents", "--count", "20", "--records", "50",
                                       "--payload-size", "12000", "--map-size", "\(256 << 10)"])
        #expect(other.status == 0, "\(other.err)")
        // Reads and writes here adopt the new size without an error reaching the caller.
        #expect(try store.count(TortureDocument.self) == 1000)
        #expect(try store.retrieve(TortureMarker.self, id: "last")?.txn == 20)
        try store.write { tx in try tx.park(Blob(id: -2, bytes: [4], checksum: CRC32C.checksum([4]))) }
        #expect(try store.environment.info().mapSize > before)
        #expect(try store.count(Blob.self) == 2)
    }
}
