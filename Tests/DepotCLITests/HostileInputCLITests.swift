import Foundation
import Testing
import DepotTestSupport

/// Inputs an outside tester found to crash, flood or leak through the CLI (2026-12-07).
@Suite("depot: hostile input found by black-box testing")
struct HostileInputCLITests {
    let folder = TemporaryFolder("depot-hostile")
    let shell = URL(fileURLWithPath: "/bin/sh")

    /// `sh -c SCRIPT` in `directory`, with `$DEPOT` naming the depot executable.
    func inFolder(_ directory: String, _ script: String) throws -> CommandResult {
        let executable = try #require(depotExecutable(), "the depot executable must be built")
        return try runCommand(shell, ["-c", "cd \"$0\" && \(script)", directory], environment: ["DEPOT": executable.path])
    }

    /// Foundation's `deletingLastPathComponent` traps on a one-character relative path; a new
    /// store at `--path s` (or `x/sub`) went through it.
    @Test func importIntoARelativeOneCharacterFolder() throws {
        let dir = folder.sub("relative")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try Data(#"{"collection":"P","id":1,"document":{}}"#.utf8).write(to: URL(fileURLWithPath: dir + "/one.jsonl"))
        for path in ["s", "x/sub"] {
            let run = try inFolder(dir, "\"$DEPOT\" import --path \(path) one.jsonl --json")
            #expect(run.status == 0, "\(run)")
            #expect(run.out.contains(#""documents":1"#), "\(run)")
            #expect(FileManager.default.fileExists(atPath: dir + "/\(path)/data.mdb"), "\(run)")
        }
    }

    /// `-` read standard input without bound (and trapped on a read error): more than the
    /// limit now fails at once, naming the limit, and nothing is written.
    @Test func standardInputPastTheLimitIsRefused() throws {
        let dir = folder.sub("stdin")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let run = try inFolder(dir, "head -c 268435457 /dev/zero | \"$DEPOT\" put --path s --db d z - --json")
        #expect(run.status == 1, "\(run)")
        #expect(run.err.contains(#""code":"inputTooLarge""#) && run.err.contains("256 MiB"), "\(run)")
        let get = try depot("get", "--path", dir + "/s", "--db", "d", "z")
        #expect(get.status == 1, "nothing stored: \(get)")

        let small = try inFolder(dir, "printf 'hello\\n' | \"$DEPOT\" put --path s --db d z -")
        #expect(small.status == 0, "\(small)")
        #expect(try depot("get", "--path", dir + "/s", "--db", "d", "z").out == "hello\n")
    }

    /// A leaf node whose key size reads 0 (a damaged page): `list` printed thousands of empty
    /// keys and exited 0. LMDB never stores an empty key, so the cursor now reports damage.
    @Test func anEmptyKeyFromADamagedNodeIsReported() throws {
        let dir = folder.sub("empty-key")
        #expect(try depot("fill", "--path", dir, "--db", "raw", "--count", "100", "--value-size", "50").status == 0)
        try patchFirstKeySize(dir, 0)
        let list = try depot("list", "--path", dir, "--db", "raw", "--json")
        #expect(list.status == 1, "\(list)")
        #expect(list.err.contains("MDB_CORRUPTED") && list.err.contains("a key of 0 bytes"), "\(list)")
    }

    /// A document node pointing into a stored value: the "key" that verify and export named
    /// (as hex) was the record's own bytes. A key that is no ID of the collection's kind is
    /// named by its size only.
    @Test func aDamagedDocumentKeyIsNotPrinted() throws {
        let dir = folder.sub("doc-key")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        var lines = ""
        for i in 1...2000 { lines += #"{"collection":"Employee","id":\#(i),"document":{"id":\#(i),"name":"E\#(i)","salary":\#(1000 + i)}}"# + "\n" }
        let input = dir + "/emp.jsonl"
        try Data(lines.utf8).write(to: URL(fileURLWithPath: input))
        #expect(try depot("import", "--path", dir + "/s", input).status == 0)
        // The first node offset of leaf page 5 (a page of the collection) moved to 4046: the
        // node's key then starts inside a record (found by black-box testing).
        let url = URL(fileURLWithPath: dir + "/s/data.mdb")
        var data = [UInt8](try Data(contentsOf: url))
        let base = 5 * 4096
        try #require(data.count > base + 4096 && data[base + 10] == 0x02, "page 5 is a leaf page")
        data[base + 16] = UInt8(4046 & 0xFF)
        data[base + 17] = UInt8(4046 >> 8)
        try Data(data).write(to: url)
        for command in [["verify", "--path", dir + "/s", "--json"], ["export", "--path", dir + "/s", "--json"]] {
            let run = try depot(command)
            let text = run.out + run.err
            #expect(run.status == 1, "\(run)")
            #expect(!text.contains("0x0102"), "no record bytes shown as a key: \(run)")
            #expect(text.contains("bytes that is no signed ID: a damaged entry"), "named by its size: \(run)")
        }
    }

    /// The smaller inconsistencies the same testing found: each is now the error its kind of
    /// input gets elsewhere.
    @Test func edgeArgumentsGetTheirUsualErrors() throws {
        let dir = folder.sub("edges")
        // An empty key is a usage error for every kv command (set already said so).
        for command in [["kv", "get", "--path", dir, ""], ["kv", "delete", "--path", dir, ""], ["kv", "set", "--path", dir, "", "1"]] {
            let run = try depot(command + ["--json"])
            #expect(run.status == 64 && run.err.contains("KEY must not be empty"), "\(command): \(run)")
        }
        let demo = try depot("demo", "--path", "", "--json")
        #expect(demo.status == 64 && demo.err.contains("--path must not be empty"), "\(demo)")
        // A collection name too long for its meta keys (500 bytes and more) is a name error,
        // as a 301-byte one is, not LMDB's key-size error.
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let input = dir + "/long.jsonl"
        try Data(#"{"collection":"\#(String(repeating: "C", count: 505))","id":1,"document":{}}"#.utf8).write(to: URL(fileURLWithPath: input))
        let run = try depot("import", "--path", dir + "/s", input, "--json")
        #expect(run.status == 1 && run.err.contains(#""code":"invalidCollectionName""#) && run.err.contains("longer than 300 bytes"), "\(run)")
    }

    /// A backup killed part way left a truncated data.mdb under its final name (verify then
    /// failed on it, and every later backup there failed with "already exists"). The copy is
    /// now written as data.mdb.partial-PID and named data.mdb only once complete.
    @Test func aBackupKilledPartWayLeavesNoDataFile() throws {
        let source = folder.sub("backup-source")
        #expect(try depot("fill", "--path", source, "--db", "f", "--count", "40000", "--value-size", "1000").status == 0)
        let executable = try #require(depotExecutable())
        var interrupted = 0
        for attempt in 0..<5 where interrupted == 0 {
            let destination = folder.sub("backup-\(attempt)")
            try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: true)
            let process = Process()
            process.executableURL = executable
            process.arguments = ["backup", "--path", source, "--to", destination, "--compact"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            // Killed as soon as its copy is on disk under the partial name.
            let deadline = Date().addingTimeInterval(20)
            var sawPartial = false
            while process.isRunning && Date() < deadline {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: destination)) ?? []
                if names.contains(where: { $0.hasPrefix("data.mdb.partial-") }) {
                    sawPartial = true
                    kill(process.processIdentifier, SIGKILL)
                    break
                }
                usleep(200)
            }
            process.waitUntilExit()
            guard sawPartial, process.terminationReason == .uncaughtSignal else { continue } // finished first
            if FileManager.default.fileExists(atPath: destination + "/data.mdb") {
                // Killed only after the copy had its name: then it is complete.
                #expect(try depot("verify", "--path", destination).status == 0, "a data.mdb is always a complete copy")
                continue
            }
            interrupted += 1
            let again = try depot("backup", "--path", source, "--to", destination)
            #expect(again.status == 0, "a backup into the same folder: \(again)")
            #expect(try depot("verify", "--path", destination).status == 0)
        }
        #expect(interrupted > 0, "no backup could be killed part way in 5 tries")
    }

    /// On a full disk, opening a store whose lock file did not exist yet died with SIGBUS
    /// (LMDB maps the new, sparse lock file and writes into it), reported as a damaged store.
    /// It is now `ENOSPC`, naming the lock file. Needs root (a 2 MiB tmpfs); skipped otherwise.
    @Test(.enabled(if: Self.canMountTmpfs(), "needs root and the right to mount a tmpfs"))
    func aFullDiskIsNoSpaceNotDamage() throws {
        let disk = try mountTmpfs("tmpfs")
        defer { _ = try? runCommand(URL(fileURLWithPath: "/bin/umount"), [disk]) }
        #expect(try depot("kv", "set", "--path", disk + "/e", "k", "v").status == 0)
        try FileManager.default.removeItem(atPath: disk + "/e/lock.mdb")
        let fill = try runCommand(shell, ["-c", "dd if=/dev/zero of=\"$0/ballast\" bs=4k 2>/dev/null; true", disk])
        #expect(fill.status == 0)
        for (what, arguments) in [("the existing store", ["kv", "get", "--path", disk + "/e", "k", "--json"]),
                                  ("a new store", ["put", "--path", disk + "/new", "--db", "d", "k", "v", "--json"])] {
            let run = try depot(arguments)
            #expect(run.status == 1 && run.err.contains("lock file") && run.err.contains("no space left"), "\(what): \(run)")
            #expect(!run.err.contains("storeDamaged"), "\(what): \(run)")
        }
        #expect(!FileManager.default.fileExists(atPath: disk + "/new"), "a store that could not be made leaves no folder behind")
        try FileManager.default.removeItem(atPath: disk + "/ballast")
        #expect(try depot("kv", "get", "--path", disk + "/e", "k").out.contains("v"), "the store was fine all along")
    }

    /// `fill` stopped by a full disk said only that the disk was full, not that the batches
    /// before were committed: the error says how many records (and `committed` in JSON).
    @Test(.enabled(if: Self.canMountTmpfs(), "needs root and the right to mount a tmpfs"))
    func aFillStoppedByAFullDiskSaysWhatItCommitted() throws {
        let disk = try mountTmpfs("tmpfs-fill")
        defer { _ = try? runCommand(URL(fileURLWithPath: "/bin/umount"), [disk]) }
        let fill = try depot("fill", "--path", disk + "/s", "--db", "t", "--count", "100000", "--batch", "1000", "--json")
        #expect(fill.status == 1, "\(fill)")
        let object = try JSONSerialization.jsonObject(with: Data(fill.err.utf8)) as? [String: Any]
        let error = try #require(object?["error"] as? [String: Any], "\(fill.err)")
        let committed = try #require(error["committed"] as? Int, "\(fill.err)")
        #expect(committed > 0 && committed % 1000 == 0 && committed < 100_000, "\(error)")
        #expect(error["code"] as? String == "errno 28" && (error["message"] as? String)?.contains("the first \(committed) records") == true, "\(error)")
        let stat = try depot("stat", "--path", disk + "/s", "--json")
        #expect(stat.out.contains("\"entries\":\(committed)"), "exactly the records said committed are there: \(stat.out)")
    }

    /// A 2 MiB tmpfs mounted on a new folder `name` (the caller unmounts it).
    func mountTmpfs(_ name: String) throws -> String {
        let disk = folder.sub(name)
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
        let mount = try runCommand(URL(fileURLWithPath: "/bin/mount"), ["-t", "tmpfs", "-o", "size=2m", "tmpfs", disk])
        try #require(mount.status == 0, "\(mount)")
        return disk
    }

    /// Whether this process may mount a tmpfs (root, and a system that lets it): tried once.
    static func canMountTmpfs() -> Bool {
        guard geteuid() == 0, FileManager.default.isExecutableFile(atPath: "/bin/mount") else { return false }
        let probe = NSTemporaryDirectory() + "depot-mount-probe-\(getpid())"
        guard (try? FileManager.default.createDirectory(atPath: probe, withIntermediateDirectories: true)) != nil else { return false }
        defer { try? FileManager.default.removeItem(atPath: probe) }
        guard let mounted = try? runCommand(URL(fileURLWithPath: "/bin/mount"), ["-t", "tmpfs", "-o", "size=64k", "tmpfs", probe]),
              mounted.status == 0 else { return false }
        _ = try? runCommand(URL(fileURLWithPath: "/bin/umount"), [probe])
        return true
    }

    // MARK: Page surgery (LMDB 0.9 leaf pages: header 16 bytes, then 2-byte node offsets)

    /// Sets the key size of the first node of the first leaf page holding 'key-' keys.
    func patchFirstKeySize(_ dir: String, _ size: UInt16) throws {
        try patchLeaf(dir) { data, base, node in
            guard Array(data[node + 8..<node + 12]) == Array("key-".utf8) else { return false }
            data[node + 6] = UInt8(size & 0xFF)
            data[node + 7] = UInt8(size >> 8)
            return true
        }
    }

    func patchLeaf(_ dir: String, _ patch: (inout [UInt8], Int, Int) -> Bool) throws {
        let url = URL(fileURLWithPath: dir + "/data.mdb")
        var data = [UInt8](try Data(contentsOf: url))
        func u16(_ o: Int) -> Int { Int(data[o]) | Int(data[o + 1]) << 8 }
        for page in 2..<(data.count / 4096) {
            let base = page * 4096
            let pgno = (0..<8).reduce(0) { $0 | Int(data[base + $1]) << (8 * $1) }
            guard pgno == page, u16(base + 10) == 0x02 else { continue } // a live leaf page
            if patch(&data, base, base + u16(base + 16)) {
                try Data(data).write(to: url)
                return
            }
        }
        Issue.record("no leaf page to patch in \(dir)")
    }
}
