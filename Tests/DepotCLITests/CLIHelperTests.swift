import DepotTestSupport
import Foundation
import Testing

/// The shared `depot(...)` / `runCommand(...)` helper of every CLI suite (DepotTestSupport).
@Suite("The shared CLI test helper")
struct CLIHelperTests {
    @Test func aRunPastItsDeadlineIsKilledAndSaysSo() throws {
        let sleep = try #require(which("sleep"))
        let started = Date()
        let run = try runCommand(sleep, ["30"], timeout: 0.5)
        #expect(run.hung && run.status == SIGKILL, "\(run)")
        #expect(Date().timeIntervalSince(started) < 20, "killed at its deadline, not waited for")
    }

    @Test func outputStatusInputAndEnvironmentComeBack() throws {
        let version = try depot("--version")
        #expect(version.status == 0 && !version.hung && !version.out.isEmpty, "\(version)")
        let shell = URL(fileURLWithPath: "/bin/sh")
        let run = try runCommand(shell, ["-c", "cat; echo \"[$DEPOT_HELPER_PROBE]\" >&2; exit 3"],
                                 input: Data("from stdin".utf8), environment: ["DEPOT_HELPER_PROBE": "set"])
        #expect(run.status == 3 && run.out == "from stdin" && run.err == "[set]\n", "\(run)")
        let removed = try runCommand(shell, ["-c", "echo \"[${HOME-unset}]\""], environment: ["HOME": ""])
        #expect(removed.out == "[unset]\n", "an empty value removes the variable: \(removed)")
    }
}
