import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Standard output of every command, whose write errors are failures of the command.
///
/// `FileHandle.standardOutput.write(_:)` traps when the write fails (a full disk, a closed pipe
/// with SIGPIPE ignored), and `print` drops the error: a command crashed, or exited 0 with its
/// output lost. Commands write bulk output through ``write(_:)-(String)``, which writes to the
/// file descriptor after flushing what `print` buffered (so the order holds), and the entry
/// point calls ``finish()`` after a command succeeds.
enum StandardOutput {
    /// Writes `text` to standard output.
    /// - Throws: ``CLIFailure`` (code `outputFailed`) when standard output cannot be written.
    static func write(_ text: String) throws {
        var text = text
        try text.withUTF8 { try write(UnsafeRawBufferPointer($0)) }
    }

    /// Writes `bytes` to standard output.
    static func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write($0) }
    }

    private static func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard !bytes.isEmpty else { return }
        try finish()
        if let code = writeAll(bytes, to: STDOUT_FILENO) { throw failure(code) }
    }

    /// Writes all of `bytes` to `descriptor` with `write(2)`, retrying interrupted writes;
    /// returns the `errno` of a failed write (nil when all was written).
    static func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32) -> Int32? {
        guard let base = bytes.baseAddress else { return nil }
        var offset = 0
        while offset < bytes.count {
            #if canImport(Glibc)
            let written = Glibc.write(descriptor, base + offset, bytes.count - offset)
            #else
            let written = Darwin.write(descriptor, base + offset, bytes.count - offset)
            #endif
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            if written == 0 { return EIO }
            offset += written
        }
        return nil
    }

    /// Writes out what `print` buffered; throws when it cannot be written.
    static func finish() throws {
        // Every stream (C's `stdout` itself is a global variable Swift 6 will not read).
        if fflush(nil) != 0 { throw failure(errno) }
    }

    /// What the running command committed before printing its report (nil: nothing), so that
    /// an output failure does not read as a failed write (which a caller would run again).
    /// Written by the command's own thread only, before anything reads it.
    nonisolated(unsafe) private static var committed: String?

    /// Records that the command's change is committed (`change` says what, in words: "the
    /// document was stored"): a later failure to print its report says so.
    static func noteCommitted(_ change: String) { committed = change }

    private static func failure(_ code: Int32) -> CLIFailure {
        var message = "cannot write standard output: \(String(cString: strerror(code)))"
        if let committed { message += "; \(committed) before the report could be printed (it is committed: do not run the command again)" }
        return CLIFailure(code: "outputFailed", message: message)
    }
}
