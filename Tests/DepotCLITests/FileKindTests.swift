import Foundation
import Testing
import DepotTestSupport

/// A `data.mdb` or `lock.mdb` that is not a regular file: a FIFO blocked the open forever, a
/// directory was called damaged, an empty file gave "bad file descriptor". Every command refuses
/// them with an error naming the file.
@Suite("depot: data.mdb and lock.mdb that are not regular files")
struct FileKindTests {
    let folder = TemporaryFolder("depot-filekind")

    func folderWith(_ name: String, _ make: (String) throws -> Void) throws -> String {
        let dir = folder.sub(name)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try make(dir)
        return dir
    }

    let commands: [[String]] = [["stat"], ["verify"], ["list", "--db", "a"], ["put", "--db", "a", "k", "v"]]

    @Test func fifoDataFileIsRefusedNotWaitedOn() throws {
        let dir = try folderWith("fifo") { #expect(mkfifo($0 + "/data.mdb", 0o600) == 0) }
        for command in commands {
            let result = try depot(command + ["--path", dir], timeout: 20)
            #expect(!result.hung, "\(command): still waiting after 20 s")
            #expect(result.status == 1, "\(command): \(result.err)")
            #expect(result.err.contains("data.mdb' is a FIFO, not a regular file"), "\(command): \(result.err)")
            #expect(!result.err.contains("empty"), "\(command): \(result.err)")
        }
    }

    @Test func directoryDataFileAndFifoLockFileAreRefused() throws {
        let directory = try folderWith("dir") { try FileManager.default.createDirectory(atPath: $0 + "/data.mdb", withIntermediateDirectories: false) }
        for command in commands {
            let result = try depot(command + ["--path", directory], timeout: 20)
            #expect(!result.hung && result.status == 1, "\(command): \(result.err)")
            #expect(result.err.contains("data.mdb' is a directory, not a regular file"), "\(command): \(result.err)")
            #expect(!result.err.contains("damaged"), "\(command): \(result.err)")
        }
        let lock = folder.sub("lock")
        #expect(try depot(["put", "--path", lock, "--db", "a", "k", "v"], timeout: 20).status == 0)
        try FileManager.default.removeItem(atPath: lock + "/lock.mdb")
        #expect(mkfifo(lock + "/lock.mdb", 0o600) == 0)
        for command in commands {
            let result = try depot(command + ["--path", lock], timeout: 20)
            #expect(!result.hung && result.status == 1, "\(command): \(result.err)")
            #expect(result.err.contains("lock.mdb' is a FIFO, not a regular file"), "\(command): \(result.err)")
        }
    }

    @Test func emptyDataFileIsNamedByReadingCommands() throws {
        let dir = try folderWith("empty") { #expect(FileManager.default.createFile(atPath: $0 + "/data.mdb", contents: Data())) }
        for command in [["stat"], ["verify"], ["list", "--db", "a"]] {
            let result = try depot(command + ["--path", dir], timeout: 20)
            #expect(result.status == 1, "\(command): \(result.err)")
            #expect(result.err.contains("data.mdb' is empty (0 bytes)"), "\(command): \(result.err)")
            #expect(!result.err.contains("bad file descriptor"), "\(command): \(result.err)")
        }
        // A writable open still creates the environment in the empty file.
        #expect(try depot(["put", "--path", dir, "--db", "a", "k", "v"], timeout: 20).status == 0)
        #expect(try depot(["stat", "--path", dir], timeout: 20).status == 0)
    }
}
