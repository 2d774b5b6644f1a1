import Foundation
import Testing
import DepotTestSupport

/// Output that cannot be written (a full disk: `/dev/full`): `export`, `query` and `doc get`
/// trapped in Foundation's `FileHandle.write` (and then blamed the store), and the commands that
/// `print` exited 0 with their output lost. Each is a plain failure now, exit 1, one JSON object
/// with `--json`.
@Suite("depot: standard output that cannot be written")
struct OutputFailureCLITests {
    let folder = TemporaryFolder("depot-cli-output")

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/dev/full")))
    func aFailedWriteIsAFailureNotACrash() throws {
        let store = folder.sub("store")
        #expect(try depot("doc", "put", "--path", store, "--collection", "C", "--id", "1", #"{"a":1}"#).status == 0)
        let exe = try #require(depotExecutable(), "the depot executable must be built")
        for command in ["export", "query --collection C", "collections", "doc get --collection C --id 1", "stat", "export --json"] {
            let run = try runProcess(URL(fileURLWithPath: "/bin/sh"), ["-c", #""$0" $2 --path "$1" > /dev/full"#, exe.path, store, command])
            #expect(run.status == 1, "\(command): \(run.err)")
            #expect(run.err.contains("cannot write standard output: No space left on device"), "\(command): \(run.err)")
            #expect(!run.err.contains("Fatal error") && !run.err.contains("internal check"), "\(command): \(run.err)")
            if command.hasSuffix("--json") {
                let object = try JSONSerialization.jsonObject(with: Data(run.err.utf8)) as? [String: Any]
                #expect((object?["error"] as? [String: Any])?["code"] as? String == "outputFailed", "\(run.err)")
            }
        }
    }

    /// A command whose write committed and whose report then could not be printed exited 1 as
    /// if it had failed (a caller would run it again: a seed with generated IDs doubled its
    /// documents): the failure says the change is committed.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/dev/full")))
    func aReportLostAfterACommitSaysTheChangeIsCommitted() throws {
        let store = folder.sub("committed")
        let exe = try #require(depotExecutable(), "the depot executable must be built")
        let run = try runProcess(URL(fileURLWithPath: "/bin/sh"),
                                 ["-c", #""$0" doc put --path "$1" --collection C --id 7 '{"a":1}' > /dev/full"#, exe.path, store])
        #expect(run.status == 1, "\(run.err)")
        #expect(run.err.contains("the document was stored before the report could be printed"), "\(run.err)")
        #expect(run.err.contains("do not run the command again"), "\(run.err)")
        #expect(try depot("doc", "get", "--path", store, "--collection", "C", "--id", "7").status == 0, "it is stored")
    }

    /// Standard error that cannot be written (`2>/dev/full`) trapped in Foundation's
    /// `FileHandle.write` when a command printed an error or a warning (SIGILL, then the crash
    /// handler's message): the message is given up, the exit status stays the command's.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/dev/full")))
    func aFailedWriteToStandardErrorIsNotACrash() throws {
        let store = folder.sub("stderr")
        #expect(try depot("doc", "put", "--path", store, "--collection", "C", "--id", "1", #"{"a":1}"#).status == 0)
        let exe = try #require(depotExecutable(), "the depot executable must be built")
        for (command, status) in [("kv get --path \"$1\" missing", 1), ("qurey", 64), ("doc get --path \"$1\" --collection C --id 9", 1)] {
            let run = try runProcess(URL(fileURLWithPath: "/bin/sh"), ["-c", "\"$0\" \(command) 2> /dev/full", exe.path, store])
            #expect(run.status == Int32(status), "\(command): status \(run.status)")
        }
    }
}
