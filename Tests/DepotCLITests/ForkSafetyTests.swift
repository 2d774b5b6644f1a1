import DepotTestSupport
import Foundation
import Testing

@Suite("fork() safety")
struct ForkSafetyTests {
    /// `depot fork-probe` forks after opening a store: the child must be refused on every entry
    /// point of the parent's environment and be able to open the folder afresh.
    @Test func childIsRefusedTheParentsEnvironmentAndOpensItsOwn() throws {
        let exe = try #require(depotExecutable())
        let folder = TemporaryFolder("depot-fork")
        let result = try runToEnd(exe, ["fork-probe", "--path", folder.path])
        #expect(result.status == 0, "\(result.err)")
        let lines = result.out.split(separator: "\n").map(String.init)
        #expect(!lines.contains { $0.hasPrefix("fail") }, "\(result.out)")
        #expect(lines.filter { $0.hasSuffix("refused in the child") }.count == 12, "\(result.out)")
        #expect(lines.contains("ok child opened the folder afresh"))
        #expect(lines.contains("ok parent reads the child's write"))
        #expect(lines.contains("ok parent writes after the fork"))
    }
}
