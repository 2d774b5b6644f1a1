import Depot
import DepotLMDB
import Foundation
import Testing
import DepotTestSupport

/// Real I/O failures under LMDB: `Fixtures/io-fault-shim/io-fault-shim.c`, built here and loaded
/// into `depot` with `LD_PRELOAD`, makes one `pwrite`, `writev`, `fdatasync`, `fsync` or `write`
/// on `data.mdb` fail. Every such call of a commit is tried in turn, each on a fresh copy of the
/// same store. A commit whose call failed must say so (status 1, the error named, no crash), must
/// not have taken effect, and must leave a store that verifies and takes the next write; a
/// commit that said nothing failed must be there.
@Suite("Injected I/O faults under LMDB", .serialized,
       .enabled(if: FaultInjection.shimAvailable, "the shim needs Linux (LD_PRELOAD, /proc/self/fd) and a C compiler (cc, clang, gcc) on PATH"))
struct InjectedIOFaultTests {
    let folder = TemporaryFolder("depot-iofault")

    /// The environment that makes the shim fail `fault` in a depot run.
    static func fault(_ fault: String, shim: String) -> [String: String] { ["DEPOT_FAULT": fault, "LD_PRELOAD": shim] }

    /// The shim, compiled with the C compiler on PATH (the suite runs only where there is one).
    func buildShim() throws -> String {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fixtures/io-fault-shim/io-fault-shim.c").path
        let compiler = try #require(FaultInjection.cCompiler)
        try FileManager.default.createDirectory(atPath: folder.path, withIntermediateDirectories: true)
        let library = folder.sub("io-fault-shim.so")
        let build = try runToEnd(compiler, ["-shared", "-fPIC", "-o", library, source, "-ldl"])
        try #require(build.status == 0, "compiling the shim: \(build.err)")
        return library
    }

    /// The calls the shim counted on data.mdb, from its report on standard error.
    func counts(_ err: String) -> [String: Int] {
        guard let line = err.split(separator: "\n").last(where: { $0.hasPrefix("io-fault-shim:") }) else { return [:] }
        var result: [String: Int] = [:]
        for pair in line.dropFirst("io-fault-shim:".count).split(separator: " ") {
            let parts = pair.split(separator: "=")
            if parts.count == 2, let n = Int(parts[1]) { result[String(parts[0])] = n }
        }
        return result
    }

    func copy(_ template: String, _ name: String) throws -> String {
        let dir = folder.sub(name)
        try FileManager.default.copyItem(atPath: template, toPath: dir)
        return dir
    }

    @Test func everyFailingCallOfACommitFailsItCleanly() throws {
        let shim = try buildShim()
        let template = folder.sub("template")
        #expect(try depot(["fill", "--path", template, "--db", "t", "--count", "300", "--value-size", "40"]).status == 0)

        // What one durable commit of one put does to data.mdb.
        let counted = try copy(template, "counted")
        let probe = try depot(["put", "--path", counted, "--db", "t", "new", "value"], environment: Self.fault("count", shim: shim))
        #expect(probe.status == 0, "\(probe.err)")
        let calls = counts(probe.err)
        #expect((calls["pwrite"] ?? 0) >= 1, "the meta page is written: \(probe.err)")
        #expect((calls["fdatasync"] ?? 0) + (calls["fsync"] ?? 0) >= 1, "the data pages are flushed: \(probe.err)")
        #expect(try depot(["get", "--path", counted, "--db", "t", "new"]).out == "value\n", "a commit that succeeded is there")

        var cases = 0
        for (function, count) in calls.sorted(by: { $0.key < $1.key }) where count > 0 {
            for n in 1...count {
                for errno in ["EIO", "ENOSPC"] where errno == "EIO" || n == 1 {
                    cases += 1
                    let dir = try copy(template, "\(function)-\(n)-\(errno)")
                    let put = try depot(["put", "--path", dir, "--db", "t", "new", "value"], environment: Self.fault("\(function):\(n):\(errno)", shim: shim))
                    let what = "\(function) call \(n) failing with \(errno)"
                    #expect(put.status == 1, "\(what): \(put.err)")
                    #expect(put.err.contains(errno == "EIO" ? "input/output error" : "no space left"), "\(what): \(put.err)")
                    #expect(!put.err.contains("Fatal error") && !put.err.contains("crashed"), "\(what): \(put.err)")
                    let get = try depot(["get", "--path", dir, "--db", "t", "new"])
                    #expect(get.status == 1 && get.err.contains("not found"), "\(what): the failed commit took effect: \(get.out)\(get.err)")
                    let verify = try depot(["verify", "--path", dir])
                    #expect(verify.status == 0, "\(what): \(verify.out)\(verify.err)")
                    let next = try depot(["put", "--path", dir, "--db", "t", "after", "1"])
                    #expect(next.status == 0, "\(what): the next write: \(next.err)")
                    #expect(try depot(["get", "--path", dir, "--db", "t", "after"]).out == "1\n", "\(what)")
                }
            }
        }
        #expect(cases >= 3, "the shim saw the data flush, the sync and the meta page write")
        print("InjectedIOFaultTests: one put's commit made \(calls.filter { $0.value > 0 }) calls on data.mdb; \(cases) faults injected")
    }

    /// `depot backup` flushes the copy before it says it is done, and a failing write or flush of
    /// the copy is an error that leaves no partial backup behind; the next backup succeeds.
    @Test func aBackupIsFlushedAndAFailedCopyLeavesNothing() throws {
        let shim = try buildShim()
        let source = folder.sub("backup-source")
        #expect(try depot(["fill", "--path", source, "--db", "t", "--count", "2000", "--value-size", "100"]).status == 0)
        let probe = try depot(["backup", "--path", source, "--to", folder.sub("backup-counted")], environment: Self.fault("count", shim: shim))
        #expect(probe.status == 0, "\(probe.err)")
        let calls = counts(probe.err)
        #expect((calls["fsync"] ?? 0) + (calls["fdatasync"] ?? 0) >= 1, "the copy is flushed before 'copied': \(probe.err)")
        #expect((calls["fsyncdir"] ?? 0) >= 2, "and its folder and the folder's parent: \(probe.err)")
        // A folder that cannot be flushed (a file system without folder flushes: EINVAL) does
        // not undo a complete copy; an I/O error there does.
        for (n, errno, ok) in [(1, "EINVAL", true), (2, "EINVAL", true), (1, "EIO", false)] {
            let destination = folder.sub("backup-fsyncdir-\(n)-\(errno)")
            let run = try depot(["backup", "--path", source, "--to", destination], environment: Self.fault("fsyncdir:\(n):\(errno)", shim: shim))
            #expect(run.status == (ok ? 0 : 1), "folder flush \(n) failing with \(errno): \(run.err)")
            #expect(FileManager.default.fileExists(atPath: destination) == ok, "folder flush \(n) failing with \(errno)")
        }
        var faults = 0
        for (function, count) in calls.sorted(by: { $0.key < $1.key }) where count > 0 && function != "fsyncdir" {
            for n in 1...count {
                faults += 1
                let what = "\(function) call \(n) of the copy failing"
                let destination = folder.sub("backup-\(function)-\(n)")
                let run = try depot(["backup", "--path", source, "--to", destination], environment: Self.fault("\(function):\(n)", shim: shim))
                #expect(run.status == 1, "\(what): \(run.out)\(run.err)")
                #expect(run.err.contains("input/output error") && run.err.contains("removed"), "\(what): \(run.err)")
                #expect(!FileManager.default.fileExists(atPath: destination), "\(what): no partial backup is left")
                #expect(try depot(["backup", "--path", source, "--to", destination]).status == 0, "\(what): the next backup")
                #expect(try depot(["verify", "--path", destination]).status == 0, "\(what)")
            }
        }
        #expect(faults >= 2, "the copy's writes and its flush")
    }

    /// The same through group commit: eight tasks commit 40 transactions with `try await
    /// env.write` (`depot torture --async-writers 8`). Batches vary from run to run, so the faults
    /// are spread over the calls a first run made; a fault that hit fails its whole batch, every
    /// caller of it retries, and nothing acknowledged is missing.
    @Test func groupCommitWritersRecoverFromFailedCallsAndLoseNothing() throws {
        let shim = try buildShim()
        let template = folder.sub("group-template")
        #expect(try depot(["torture", "--path", template, "--mode", "kv", "--count", "1", "--records", "\(tortureRecords)"]).status == 0)
        let commits = 40
        let arguments = ["torture", "--mode", "kv", "--count", "\(commits)", "--records", "\(tortureRecords)",
                         "--payload-size", "300", "--async-writers", "8", "--retries", "5"]
        let probe = try depot(arguments + ["--path", try copy(template, "group-counted")], environment: Self.fault("count", shim: shim))
        #expect(probe.status == 0, "\(probe.err)")
        let calls = counts(probe.err)
        var hit = 0, recovered = 0
        for (function, count) in calls.sorted(by: { $0.key < $1.key }) where count > 0 {
            for n in Set(stride(from: 1, through: count, by: max(1, count / 6))) {
                let what = "\(function) call \(n) failing"
                let dir = try copy(template, "group-\(function)-\(n)")
                let run = try depot(arguments + ["--path", dir], environment: Self.fault("\(function):\(n)", shim: shim))
                #expect(run.status == 0, "\(what): \(run.err)")
                let lines = run.out.split(separator: "\n")
                let acks = Set(lines.compactMap { $0.hasPrefix("ack ") ? UInt64($0.dropFirst(4)) : nil })
                #expect(acks == Set(2...UInt64(commits + 1)), "\(what): every commit acknowledged")
                let failed = lines.filter { $0.hasPrefix("failed ") }.count
                if (counts(run.err)[function] ?? 0) >= n {
                    hit += 1
                    #expect(failed >= 1, "\(what): the failed batch is reported to its callers: \(run.out)")
                }
                if lines.contains(where: { $0.hasPrefix("reopened ") && $0 != "reopened 0" }) { recovered += 1 }
                let env = try Environment.open(path: dir)
                #expect(try CrashSafetyTests.verifyKeyValue(env, start: 1) == UInt64(commits + 1), "\(what)")
                try env.close()
                #expect(try depot(["verify", "--path", dir]).status == 0, "\(what)")
            }
        }
        print("InjectedIOFaultTests (group commit): a first run made \(calls.filter { $0.value > 0 }) calls; \(hit) faults hit, \(recovered) runs reopened after MDB_PANIC")
        #expect(hit >= 3, "faults in the data flush, the sync and the meta page write")
    }

    /// A writer that goes on after a failed commit (`depot torture --retries`): whichever call of
    /// its eight commits fails — including the meta-page write, after which LMDB refuses the
    /// environment (`MDB_PANIC`) until Depot opens it again inside the process — the failure is
    /// reported once, the retried commit and every later one are acknowledged, and every
    /// acknowledged transaction is there, whole, with matching checksums.
    @Test(arguments: ["kv", "documents"])
    func aWriterRecoversFromEachFailedCallAndLosesNothing(mode: String) throws {
        let shim = try buildShim()
        let template = folder.sub("torture-template-\(mode)")
        let first = try depot(["torture", "--path", template, "--mode", mode, "--count", "1", "--records", "\(tortureRecords)"])
        #expect(first.status == 0, "\(first.err)")
        let commits = 8
        let arguments = ["torture", "--mode", mode, "--count", "\(commits)", "--records", "\(tortureRecords)",
                         "--payload-size", "600", "--retries", "3"]
        let counted = try copy(template, "torture-counted-\(mode)")
        let probe = try depot(arguments + ["--path", counted], environment: Self.fault("count", shim: shim))
        #expect(probe.status == 0, "\(probe.err)")
        let calls = counts(probe.err)
        #expect((calls["pwrite"] ?? 0) >= commits, "a meta page per commit: \(probe.err)")

        var faults = 0, panics = 0
        for (function, count) in calls.sorted(by: { $0.key < $1.key }) where count > 0 {
            for n in 1...count {
                faults += 1
                let what = "\(function) call \(n) of \(count) failing"
                let dir = try copy(template, "torture-\(mode)-\(function)-\(n)")
                let run = try depot(arguments + ["--path", dir], environment: Self.fault("\(function):\(n)", shim: shim))
                #expect(run.status == 0, "\(what): \(run.err)")
                let lines = run.out.split(separator: "\n")
                let failed = lines.filter { $0.hasPrefix("failed ") }
                #expect(failed.count == 1, "\(what): one failed commit reported: \(run.out)")
                if lines.contains(where: { $0.hasPrefix("reopened ") && $0 != "reopened 0" }) { panics += 1 }
                let acks = lines.compactMap { $0.hasPrefix("ack ") ? UInt64($0.dropFirst(4)) : nil }
                #expect(acks == Array(2...UInt64(commits + 1)), "\(what): every commit acknowledged once, in order: \(run.out)")
                let env = try Environment.open(path: dir)
                let last = mode == "kv" ? try CrashSafetyTests.verifyKeyValue(env, start: 1)
                    : try CrashSafetyTests.verifyDocuments(try Store(environment: env), start: 1)
                #expect(last == UInt64(commits + 1), "\(what): the last transaction present")
                try env.close()
                #expect(try depot(["verify", "--path", dir]).status == 0, "\(what)")
            }
        }
        print("InjectedIOFaultTests (\(mode)): \(commits) commits made \(calls.filter { $0.value > 0 }) calls on data.mdb; \(faults) faults injected, \(panics) of them MDB_PANIC")
        #expect(panics >= 1, "a failed meta-page write (MDB_PANIC, the environment opened again) was among the faults")
    }
}
