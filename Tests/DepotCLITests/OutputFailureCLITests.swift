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
}
