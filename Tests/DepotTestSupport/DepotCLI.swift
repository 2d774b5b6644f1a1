import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What a run of the `depot` command printed and how it ended.
public struct CommandResult: Sendable, CustomStringConvertible {
    /// The exit status (the signal number when it was killed).
    public let status: Int32
    /// Standard output.
    public let out: String
    /// Standard error.
    public let err: String
    /// Whether it ran past its deadline and was killed.
    public let hung: Bool

    /// Everything, for failure messages.
    public var description: String { "status \(status)\(hung ? " (killed at its deadline)" : "")\nstdout: \(out)\nstderr: \(err)" }
}

/// Runs the built `depot` with `arguments` and returns its status and output; one helper for
/// every CLI suite.
///
/// Output goes to files, so no pipe can fill up however much the command prints; a run still
/// going at `timeout` is killed (`hung` is then true) rather than hanging the test run.
/// - Parameters:
///   - arguments: The command line after `depot`.
///   - input: Standard input (nil: the test's own).
///   - environment: Variables added to (or replacing) this process's environment for the run;
///     an empty value removes the variable.
///   - timeout: Seconds before the run is killed.
@discardableResult
public func depot(_ arguments: [String], input: Data? = nil, environment: [String: String] = [:],
                  timeout: TimeInterval = 120) throws -> CommandResult {
    let executable = try #require(depotExecutable(), "the depot executable must be built")
    return try runCommand(executable, arguments, input: input, environment: environment, timeout: timeout)
}

/// ``depot(_:input:environment:timeout:)`` with the arguments listed.
@discardableResult
public func depot(_ arguments: String..., input: Data? = nil, environment: [String: String] = [:],
                  timeout: TimeInterval = 120) throws -> CommandResult {
    try depot(arguments, input: input, environment: environment, timeout: timeout)
}

/// Runs `executable` to its end or its deadline, output to files (see ``depot(_:input:environment:timeout:)``).
/// - Parameters:
///   - executable: The program.
///   - arguments: Its arguments.
///   - input: Standard input (nil: the test's own).
///   - environment: Variables added to (or replacing; an empty value removes) this process's environment.
///   - timeout: Seconds before the run is killed (nil: no deadline).
public func runCommand(_ executable: URL, _ arguments: [String], input: Data? = nil, environment: [String: String] = [:],
                       timeout: TimeInterval? = 120) throws -> CommandResult {
    let dir = NSTemporaryDirectory() + "depot-cli-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: dir) }
    _ = FileManager.default.createFile(atPath: dir + "/out", contents: nil)
    _ = FileManager.default.createFile(atPath: dir + "/err", contents: nil)
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    if !environment.isEmpty {
        var variables = ProcessInfo.processInfo.environment
        for (name, value) in environment { variables[name] = value.isEmpty ? nil : value }
        process.environment = variables
    }
    let outHandle = try FileHandle(forWritingTo: URL(fileURLWithPath: dir + "/out"))
    let errHandle = try FileHandle(forWritingTo: URL(fileURLWithPath: dir + "/err"))
    defer {
        try? outHandle.close()
        try? errHandle.close()
    }
    process.standardOutput = outHandle
    process.standardError = errHandle
    let inPipe = Pipe()
    if input != nil { process.standardInput = inPipe }
    try process.run()
    if let input {
        // A writer thread: a child that exits early must not block the test on a full pipe,
        // nor end the test process (SIGPIPE, ignored: the write fails with EPIPE instead).
        signal(SIGPIPE, SIG_IGN)
        let writer = inPipe.fileHandleForWriting
        Thread {
            try? writer.write(contentsOf: input)
            try? writer.close()
        }.start()
    }
    var hung = false
    if let timeout {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        hung = process.isRunning
        if hung { kill(process.processIdentifier, SIGKILL) }
    }
    process.waitUntilExit()
    let out = String(decoding: (try? Data(contentsOf: URL(fileURLWithPath: dir + "/out"))) ?? Data(), as: UTF8.self)
    let err = String(decoding: (try? Data(contentsOf: URL(fileURLWithPath: dir + "/err"))) ?? Data(), as: UTF8.self)
    return CommandResult(status: process.terminationStatus, out: out, err: err, hung: hung)
}

/// The `error` object of the last line a command printed on standard error with `--json`
/// (`{"error": {"message": …, "code": …}}`), or nil when that line is no such object.
public func jsonErrorObject(_ standardError: String) -> [String: Any]? {
    guard let line = standardError.split(separator: "\n").last,
          let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
    return object["error"] as? [String: Any]
}
