import Foundation
import Testing
import Depot
import DepotTestSupport

/// A live store read through a read-only mount: LMDB runs without its lock file there, so the
/// reader is not registered and a writer on the other mount reuses the pages it reads. An
/// outside tester saw `verify` and `list` report a sound store as damaged (2026-12-07). Needs
/// root (a read-only bind mount); skipped otherwise.
@Suite("depot: a store read through a read-only mount while it is written",
       .enabled(if: FaultInjection.canMountTmpfs, "a read-only bind mount needs root and CAP_SYS_ADMIN"))
struct ReadOnlyMountCLITests {
    let folder = TemporaryFolder("depot-ro-mount")
    let shell = URL(fileURLWithPath: "/bin/sh")

    /// `source` (a store of 20,000 records) and `view`, the same folder mounted read-only; the
    /// returned closure unmounts it.
    func mountedStore() throws -> (source: String, view: String, unmount: () -> Void) {
        let source = folder.sub("source"), view = folder.sub("view")
        try FileManager.default.createDirectory(atPath: view, withIntermediateDirectories: true)
        #expect(try depot("fill", "--path", source, "--db", "t", "--count", "20000", "--value-size", "100").status == 0)
        let bind = try runCommand(URL(fileURLWithPath: "/bin/mount"), ["--bind", source, view])
        try #require(bind.status == 0, "\(bind)")
        let unmount = { _ = try? runCommand(URL(fileURLWithPath: "/bin/umount"), [view]) }
        let readOnly = try runCommand(URL(fileURLWithPath: "/bin/mount"), ["-o", "remount,bind,ro", view])
        if readOnly.status != 0 { unmount() }
        try #require(readOnly.status == 0, "\(readOnly)")
        return (source, view, unmount)
    }

    @Test func theEnvironmentSaysItsReadersAreNotRegistered() throws {
        let (source, view, unmount) = try mountedStore()
        defer { unmount() }
        // One environment per file in a process: each is closed before the other path is opened.
        let unregistered = try Environment.open(path: view, options: EnvironmentOptions(readOnly: true))
        #expect(!unregistered.registersReaders)
        try unregistered.close()
        let writable = try Environment.open(path: source, options: EnvironmentOptions(readOnly: true))
        #expect(writable.registersReaders)
        try writable.close()
    }

    /// The demo in a folder it cannot create printed Foundation's `Error Domain=NSCocoaErrorDomain
    /// Code=642 …` without a code; it names the folder and the system's reason now.
    @Test func aDemoOnAReadOnlyFileSystemSaysSo() throws {
        let (_, view, unmount) = try mountedStore()
        defer { unmount() }
        let demo = try depot("demo", "--path", view + "/demo", "--json")
        #expect(demo.status == 1, "\(demo)")
        #expect(demo.err.contains(#""code":"errno 30""#) && demo.err.contains("cannot write") && demo.err.contains("read-only file system"), "\(demo.err)")
        #expect(!demo.err.contains("NSCocoaErrorDomain"), "\(demo.err)")
    }

    /// Nothing written meanwhile: no warning. A commit while `list` is part way (its output
    /// blocked on a full pipe until the commit is made): a warning or `changedWhileReading`, never
    /// a clean run and never `storeDamaged`.
    @Test func aCommitDuringTheReadIsSaidNotHidden() throws {
        let (source, view, unmount) = try mountedStore()
        defer { unmount() }
        let quiet = try depot("list", "--path", view, "--db", "t", "--json")
        #expect(quiet.status == 0 && quiet.err.isEmpty, "nothing was written: \(quiet.err)")
        let executable = try #require(depotExecutable())
        // `dd` takes one byte (list has begun and holds its snapshot); the commit follows; `cat` drains the rest.
        let script = #""$DEPOT" list --path "$0" --db t --json 2>"$2" | { dd bs=1 count=1 of=/dev/null 2>/dev/null; "$DEPOT" put --path "$1" --db t late value || echo put-failed >&2; cat >/dev/null; }"#
        let errors = folder.sub("list-errors.txt")
        let run = try runCommand(shell, ["-c", script, view, source, errors], environment: ["DEPOT": executable.path])
        #expect(run.status == 0 && !run.err.contains("put-failed"), "\(run)")
        let listed = try String(contentsOfFile: errors, encoding: .utf8)
        #expect(listed.contains("changedWhileReading") || listed.contains("was written while this command read it"), "\(listed)")
        #expect(!listed.contains("storeDamaged"), "\(listed)")
    }

    /// Many commits while `verify` and `list` run: every problem found is reported as a change
    /// during the read (the store is sound: verified afterwards where it is writable).
    @Test func aWriterElsewhereIsNeverReportedAsDamage() throws {
        let (source, view, unmount) = try mountedStore()
        defer { unmount() }
        let executable = try #require(depotExecutable())
        let writer = Process()
        writer.executableURL = shell
        writer.arguments = ["-c", #"for i in 1 2 3 4 5 6 7 8; do "$DEPOT" fill --path "$0" --db t --count 20000 --value-size 100 --batch 20 >/dev/null || exit 1; done"#, source]
        writer.environment = ["DEPOT": executable.path]
        try writer.run()
        defer { if writer.isRunning { writer.terminate() } }
        var runs = 0
        while writer.isRunning && runs < 12 {
            runs += 1
            for arguments in [["verify", "--path", view, "--json"], ["list", "--path", view, "--db", "t", "--json"]] {
                let run = try depot(arguments)
                let lines = run.err.split(separator: "\n")
                #expect(!run.err.contains("\"damaged\"") && !run.err.contains("problems\":[\""), "\(arguments[0]): \(run.err)")
                // A fault in a signal handler cannot compare transactions: it says what the mount means.
                #expect(!run.err.contains("storeDamaged") || run.err.contains("read-only file system"), "\(arguments[0]): \(run.err)")
                #expect(run.status == 0 || run.err.contains("changedWhileReading") || run.err.contains("read-only file system"), "\(arguments[0]): \(run)")
                #expect(lines.allSatisfy { $0.hasPrefix("{") }, "stderr stays JSON: \(run.err)")
                #expect(!run.out.contains("\"problems\":[\""), "verify listed problems: \(run.out)")
            }
        }
        writer.waitUntilExit()
        #expect(writer.terminationStatus == 0)
        #expect(runs > 0)
        let check = try depot("verify", "--path", source)
        #expect(check.status == 0, "the store is sound: \(check)")
    }
}
