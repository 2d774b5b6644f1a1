import DepotTestSupport
import Testing

/// The fault-injection tests (`InjectedIOFaultTests`, `FaultTests.aFullDiskIsNoSpace`) are
/// disabled where the machine cannot run them. CI must run them: `.ci/run` sets
/// `DEPOT_REQUIRE_FAULT_TESTS=1`, and there this test fails if any of them would be skipped.
@Suite("Fault-injection tests run where required")
struct FaultInjectionRequirementTests {
    @Test(.enabled(if: FaultInjection.required, "only where DEPOT_REQUIRE_FAULT_TESTS=1 (.ci/run)"))
    func everyFaultInjectionTestCanRunHere() {
        #expect(FaultInjection.shimAvailable, "InjectedIOFaultTests need Linux and a C compiler (cc, clang or gcc) on PATH")
        #expect(FaultInjection.canMountTmpfs, "FaultTests.aFullDiskIsNoSpace needs root with CAP_SYS_ADMIN to mount a tmpfs")
    }
}
