import Foundation
import Testing

/// A fresh folder under the system's temporary directory, removed when the value is released.
public final class TemporaryFolder: @unchecked Sendable {
    public let path: String
    public init(_ name: String = "depot-test") {
        path = NSTemporaryDirectory() + "\(name)-\(UUID().uuidString)"
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
    public func sub(_ name: String) -> String { path + "/" + name }
}

/// The `depot` executable built next to the test bundle.
public func depotExecutable() -> URL? {
    var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    for _ in 0..<4 {
        let candidate = dir.appendingPathComponent("depot")
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDir), !isDir.boolValue { return candidate }
        dir = dir.deletingLastPathComponent()
    }
    let cwdCandidate = URL(fileURLWithPath: FileManager.default.currentDirectoryPath + "/.build/debug/depot")
    return FileManager.default.fileExists(atPath: cwdCandidate.path) ? cwdCandidate : nil
}

/// Runs a program and returns its exit status, standard output and standard error.
@discardableResult
public func runProcess(_ executable: URL, _ arguments: [String], input: Data? = nil) throws -> (status: Int32, out: String, err: String) {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    let inPipe = Pipe()
    if input != nil { process.standardInput = inPipe }
    try process.run()
    if let input { inPipe.fileHandleForWriting.write(input); try inPipe.fileHandleForWriting.close() }
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    let errData = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: outData, as: UTF8.self), String(decoding: errData, as: UTF8.self))
}

/// Finds a program on PATH.
public func which(_ name: String) -> URL? {
    for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
        let url = URL(fileURLWithPath: String(dir)).appendingPathComponent(name)
        if FileManager.default.isExecutableFile(atPath: url.path) { return url }
    }
    return nil
}

/// A weak reference that a `@Sendable` closure (an async write's body) can fill, to check
/// afterwards that what it referred to was freed.
///
/// `@unchecked Sendable`: `object` is guarded by `lock`.
public final class WeakProbe: @unchecked Sendable {
    private let lock = NSLock()
    private weak var object: AnyObject?

    public init() {}

    /// Refers to `object` (weakly).
    public func hold(_ object: AnyObject) { lock.withLock { self.object = object } }

    /// Whether what it referred to is gone (true when it never referred to anything).
    public var isReleased: Bool { lock.withLock { object == nil } }
}
