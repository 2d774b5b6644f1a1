import Depot
import DepotTestSupport
import Foundation
import Testing

/// A document type that keeps the sync-status index.
struct CLITracked: Document, Equatable {
    static var collection: String { "Tracked" }
    static var tracksSyncStatus: Bool { true }
    var id: String
    var name: String
}

/// Export and import carry each document's sync status (export wrote none, and import and
/// `doc put` stored every document `notSynced`: a synced store came back all unsynced).
@Suite("depot export/import: sync status survives")
struct SyncStatusCLITests {
    let folder = TemporaryFolder("depot-sync")

    /// Writes `text` to a file in the folder and returns its path.
    func file(_ name: String, _ text: String) throws -> String {
        try FileManager.default.createDirectory(atPath: folder.path, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: folder.sub(name)))
        return folder.sub(name)
    }

    @Test func exportAndImportKeepEachDocumentsStatus() throws {
        let source = folder.sub("source")
        let statuses: [String: SyncStatus] = ["a": .notSynced, "b": .synced, "c": .syncing, "d": .undetermined]
        try Store(path: source).write { tx in
            for (id, status) in statuses {
                try tx.park(CLITracked(id: id, name: id.uppercased()))
                try tx.setSyncStatus(status, for: CLITracked.self, ids: [id])
            }
        }
        let exported = try depot("export", "--path", source)
        #expect(exported.status == 0, "\(exported)")
        let lines = exported.out.split(separator: "\n").map(String.init)
        #expect(lines.count == 4 && lines[0].contains(#""id":"a","document""#), "notSynced, what import stores by default, is not named: \(lines)")
        #expect(lines[1].contains(#""syncStatus":"synced","document""#) && lines[2].contains(#""syncStatus":"syncing""#)
                && lines[3].contains(#""syncStatus":"undetermined""#), "\(lines)")
        let target = folder.sub("target")
        let imported = try depot("import", "--path", target, try file("sync.jsonl", exported.out))
        #expect(imported.status == 0, "\(imported)")
        #expect(try depot("export", "--path", target).out == exported.out, "export, import, export: the same lines")
        let copy = try Store(path: target)
        for (id, status) in statuses {
            #expect(try copy.read { try $0.syncStatus(of: CLITracked.self, id: id) } == status, "\(id)")
        }
        // The sync-status index holds the imported documents (the collection tracks it).
        try copy.write { tx in try tx.park(CLITracked(id: "e", name: "E")) }
        let synced = try copy.read { try $0.retrieve(CLITracked.self, withSyncStatus: .synced) }
        #expect(synced.map(\.id) == ["b"])
    }

    @Test func aBadStatusIsRefusedWithItsLineAndPath() throws {
        let bad = try file("bad-status.jsonl", #"{"collection":"E","id":1,"document":{}}"# + "\n"
                           + #"{"collection":"E","id":2,"syncStatus":"secret","document":{}}"# + "\n")
        let store = folder.sub("bad")
        let result = try depot("import", "--path", store, bad)
        #expect(result.status == 1 && result.err.contains("line 2 at $.syncStatus") && result.err.contains("must be one of") && result.err.contains(bad), "\(result)")
        #expect(!result.err.contains("secret"), "no input value is echoed: \(result.err)")
        #expect(!FileManager.default.fileExists(atPath: store + "/data.mdb"), "nothing is stored")
    }

    @Test func docPutStoresTheStatusItIsGiven() throws {
        let store = folder.sub("doc")
        #expect(try depot("doc", "put", "--path", store, "--collection", "Tracked", "--id", "a", #"{"name":"A"}"#).status == 0)
        #expect(try depot("doc", "put", "--path", store, "--collection", "Tracked", "--id", "b", "--sync-status", "synced", #"{"name":"B"}"#).status == 0)
        let wrong = try depot("doc", "put", "--path", store, "--collection", "Tracked", "--id", "c", "--sync-status", "done", "{}")
        #expect(wrong.status == 64 && wrong.err.contains("--sync-status"), "\(wrong)")
        let opened = try Store(path: store)
        #expect(try opened.read { try $0.syncStatus(of: CLITracked.self, id: "a") } == .notSynced)
        #expect(try opened.read { try $0.syncStatus(of: CLITracked.self, id: "b") } == .synced)
    }
}
