import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs a program with standard output (or input) on a pseudo-terminal, as in an interactive
/// shell, and returns what it wrote there. Fails the test instead of waiting past `deadline`.
func runOnTerminal(_ executable: URL, _ arguments: [String], terminalInput: Bool = false,
                   deadline seconds: Double = 10) throws -> (status: Int32, terminal: [UInt8], err: String)? {
    // posix_openpt and friends are not visible from Swift's Glibc: their ioctls instead.
    let master = open("/dev/ptmx", O_RDWR | O_NOCTTY)
    var unlock: Int32 = 0, number: UInt32 = 0
    guard master >= 0, ioctl(master, UInt(0x4004_5431) /* TIOCSPTLCK */, &unlock) == 0,
          ioctl(master, UInt(0x8004_5430) /* TIOCGPTN */, &number) == 0 else {
        Issue.record("no pseudo-terminal available")
        return nil
    }
    defer { close(master) }
    let slave = open("/dev/pts/\(number)", O_RDWR | O_NOCTTY)
    guard slave >= 0 else {
        Issue.record("cannot open the pseudo-terminal's slave")
        return nil
    }
    var settings = termios()
    tcgetattr(slave, &settings)
    settings.c_oflag &= ~tcflag_t(OPOST) // no "\n" → "\r\n": the bytes as written
    tcsetattr(slave, TCSANOW, &settings)
    let terminal = FileHandle(fileDescriptor: slave, closeOnDealloc: true)
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    let err = Pipe()
    process.standardError = err
    if terminalInput {
        process.standardInput = terminal
        process.standardOutput = Pipe()
    } else {
        process.standardOutput = terminal
    }
    try process.run()
    let flags = fcntl(master, F_GETFL)
    _ = fcntl(master, F_SETFL, flags | O_NONBLOCK)
    var output: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    func drain() {
        while true {
            let got = chunk.withUnsafeMutableBytes { read(master, $0.baseAddress, $0.count) }
            if got <= 0 { return }
            output += chunk[..<got]
        }
    }
    let end = Date().addingTimeInterval(seconds)
    while process.isRunning && Date() < end {
        drain()
        usleep(10_000)
    }
    if process.isRunning {
        process.terminate()
        process.waitUntilExit()
        Issue.record("\(arguments.joined(separator: " ")) was still running after \(seconds) s")
        return nil
    }
    drain()
    let errText = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    return (process.terminationStatus, output, errText)
}
