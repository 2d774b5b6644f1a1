import Foundation

/// What the fault-injection tests need from the machine, checked once, for `.enabled(if:)`.
/// `.ci/run` sets `DEPOT_REQUIRE_FAULT_TESTS=1`, and a guard test then fails where these tests
/// could not run, so that CI (Linux, root) never counts them as passed without running them.
public enum FaultInjection {
    /// A C compiler on PATH to build `Fixtures/io-fault-shim` (the shim needs Linux:
    /// `LD_PRELOAD`, `/proc/self/fd`); nil elsewhere.
    public static let cCompiler: URL? = {
        #if os(Linux)
        return which("cc") ?? which("clang") ?? which("gcc")
        #else
        return nil
        #endif
    }()

    /// Whether the I/O fault shim can be built and preloaded here.
    public static var shimAvailable: Bool { cCompiler != nil }

    /// Whether this process may mount a small tmpfs (root with `CAP_SYS_ADMIN`): tried once on
    /// a scratch folder, which is unmounted and removed again.
    public static let canMountTmpfs: Bool = {
        #if os(Linux)
        guard geteuid() == 0, let mount = which("mount"), let umount = which("umount") else { return false }
        let probe = NSTemporaryDirectory() + "depot-tmpfs-probe-\(UUID().uuidString)"
        guard (try? FileManager.default.createDirectory(atPath: probe, withIntermediateDirectories: true)) != nil else { return false }
        defer { try? FileManager.default.removeItem(atPath: probe) }
        guard (try? runProcess(mount, ["-t", "tmpfs", "-o", "size=1m", "tmpfs", probe]))?.status == 0 else { return false }
        _ = try? runProcess(umount, [probe])
        return true
        #else
        return false
        #endif
    }()

    /// Whether the environment asks that every fault-injection test run (`.ci/run` sets it).
    public static var required: Bool { ProcessInfo.processInfo.environment["DEPOT_REQUIRE_FAULT_TESTS"] == "1" }
}
