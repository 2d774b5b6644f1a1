import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Standard error of every command: messages, warnings, progress.
///
/// `FileHandle.standardError.write(_:)` traps when the write fails (EIO, a full disk, a closed
/// pipe with SIGPIPE ignored), turning a command's warning or error message into a crash.
/// A message that cannot be written has nowhere else to go: the write is given up and the
/// command goes on (its exit status still says how it ended).
enum StandardError {
    /// Writes `text` to standard error, retrying interrupted writes; a failed write is given up.
    static func write(_ text: String) {
        var text = text
        text.withUTF8 { _ = StandardOutput.writeAll(UnsafeRawBufferPointer($0), to: STDERR_FILENO) }
    }
}
