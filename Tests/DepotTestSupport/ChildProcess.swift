import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A deterministic PRNG (SplitMix64) so that random kill moments and mutations repeat run to run.
public struct SeededRandom {
    public var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    public mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}

/// A child process whose standard output is read line by line as it arrives, and which can be
/// killed at any moment.
public final class ChildProcess {
    public let process = Process()
    private let out = Pipe()
    private let err = Pipe()
    private var buffer: [UInt8] = []
    private var finished = false

    public init(_ executable: URL, _ arguments: [String]) throws {
        process.executableURL = executable
        process.arguments = arguments
        process.standardOutput = out
        process.standardError = err
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFT_BACKTRACE"] = "enable=no"
        process.environment = environment
        try process.run()
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    public var pid: Int32 { process.processIdentifier }

    /// The next line of standard output, or nil at its end (the child exited or was killed).
    public func readLine() -> String? {
        let fd = out.fileHandleForReading.fileDescriptor
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            if finished { return nil }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, 4096) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 {
                finished = true
                if buffer.isEmpty { return nil }
                let line = String(decoding: buffer, as: UTF8.self)
                buffer.removeAll()
                return line
            }
            buffer.append(contentsOf: chunk[0..<n])
        }
    }

    /// Sends SIGKILL.
    public func killNow() { kill(process.processIdentifier, SIGKILL) }

    /// Reads the rest of standard output (as lines) and standard error, and waits for the exit.
    public func finish() -> (lines: [String], killed: Bool, status: Int32, err: String) {
        var lines: [String] = []
        while let line = readLine() { lines.append(line) }
        let errText = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (lines, process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL,
                process.terminationStatus, errText)
    }
}

/// Milliseconds since `start`, for the figures tests print (never asserted on).
public func milliseconds(since start: DispatchTime) -> Double {
    Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e6
}

/// Runs a program to its end with standard output and error going to files (no pipe can fill
/// up, however much it prints); returns its exit status and both outputs. `environment` adds to
/// (or replaces in) this process's environment for the child only: ``runCommand(_:_:input:environment:timeout:)``
/// without a deadline.
public func runToEnd(_ executable: URL, _ arguments: [String],
                     environment: [String: String] = [:]) throws -> (status: Int32, out: String, err: String) {
    let result = try runCommand(executable, arguments, environment: environment, timeout: nil)
    return (result.status, result.out, result.err)
}
