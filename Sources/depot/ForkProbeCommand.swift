import ArgumentParser
import DepotLMDB
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `depot fork-probe --path DIR`: the fork-safety check of the test suite, in a process of its
/// own (a forked child of a many-threaded test runner could deadlock on a lock another thread
/// held at the fork). Opens DIR, writes `parent`, forks; the child checks that every entry point
/// of the parent's environment throws `LMDBError.forked`, opens DIR afresh, reads `parent` and
/// writes `child`; the parent then reads `child`. Prints one `ok …`/`fail …` line per check.
struct ForkProbeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fork-probe", abstract: "Check that an environment refuses use after fork() (tests).", shouldDisplay: false)

    @OptionGroup var location: PathOption

    func run() throws {
        let env = try Environment.open(path: location.path)
        let db = try env.openDatabase("probe", key: StringCodec.self, value: StringCodec.self)
        try env.write { try $0.put("1", forKey: "parent", in: db) }
        let explicit = try env.beginTransaction(readOnly: true)
        FileHandle.standardOutput.synchronizeFile()
        let pid = fork()
        if pid < 0 { throw ExitCode(2) }
        if pid == 0 { _exit(Self.child(env: env, db: db, explicit: explicit, path: location.path)) }
        explicit.abort()
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exited = (status & 0x7f) == 0
        let code = (status >> 8) & 0xff
        print(exited && code == 0 ? "ok child checks" : "fail child exit status \(status)")
        let written = try env.read { try $0.get("child", in: db) }
        print(written == "2" ? "ok parent reads the child's write" : "fail parent reads \(written ?? "nothing")")
        try env.write { try $0.put("3", forKey: "parent-after", in: db) }
        print("ok parent writes after the fork")
    }

    /// Runs in the forked child; returns the exit status (0: every check passed).
    static func child(env: Environment, db: Database<StringCodec, StringCodec>, explicit: Transaction, path: String) -> Int32 {
        var failures: Int32 = 0
        func say(_ line: String) {
            let text = line + "\n"
            _ = text.withCString { write(1, $0, strlen($0)) }
        }
        let attempts: [(String, () throws -> Void)] = [
            ("read", { _ = try env.read { try $0.get("parent", in: db) } }),
            ("write", { try env.write { try $0.put("x", forKey: "bad", in: db) } }),
            ("begin", { _ = try env.beginTransaction() }),
            ("begin read", { _ = try env.beginTransaction(readOnly: true) }),
            ("parent's transaction", { _ = try explicit.get("parent", in: db) }),
            ("open database", { _ = try env.openDatabase("other", create: false) }),
            ("info", { _ = try env.info() }),
            ("reader list", { _ = try env.readerList() }),
            ("reader check", { _ = try env.readerCheck() }),
            ("stat", { _ = try env.stat() }),
            ("sync", { try env.sync() }),
            ("close", { try env.close() }),
        ]
        for (what, attempt) in attempts {
            do {
                try attempt()
                say("fail \(what) in the child did not throw")
                failures += 1
            } catch LMDBError.forked {
                say("ok \(what) refused in the child")
            } catch {
                say("fail \(what) threw \(error)")
                failures += 1
            }
        }
        do {
            let own = try Environment.open(path: path)
            if own === env { say("fail the child was handed the parent's environment"); failures += 1 }
            let mine = try own.openDatabase("probe", key: StringCodec.self, value: StringCodec.self)
            let seen = try own.read { try $0.get("parent", in: mine) }
            try own.write { try $0.put("2", forKey: "child", in: mine) }
            say(seen == "1" ? "ok child opened the folder afresh" : "fail child read \(seen ?? "nothing")")
            if seen != "1" { failures += 1 }
            try own.close()
        } catch {
            say("fail child could not open the folder afresh: \(error)")
            failures += 1
        }
        return failures
    }
}
