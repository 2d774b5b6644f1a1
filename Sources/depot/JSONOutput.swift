import ArgumentParser
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The output convention of every command, asked for with `--json` (documented in `depot --help`
/// and the README):
///
/// - a command that prints a stream (export, query, list, collections, kv list) prints JSON Lines,
///   one object per line;
/// - a command that prints a report (stat, verify, import, seed, backup, fill, doc put, get)
///   prints one JSON object;
/// - an error, usage errors included, is one JSON object on standard error:
///   `{"error": {"message": …, "code": …}}`; warnings are `{"warning": {"message": …}}`.
enum OutputConvention {
    /// Whether this run asked for JSON: `--json` among the arguments (before any `--`). Read
    /// from the process's arguments so that errors before a command runs (usage errors) follow it too.
    static let json: Bool = {
        let arguments = CommandLine.arguments.dropFirst()
        return arguments[..<(arguments.firstIndex(of: "--") ?? arguments.endIndex)].contains("--json")
    }()

    /// Prints `message` as an error on standard error (plain text, or the JSON object).
    static func printFailure(_ message: String, code: String? = nil) {
        if json, let line = try? JSONOutput.line(["error": FailureLine(message: message, code: code)]) {
            StandardError.write(line + "\n")
        } else {
            printError("error: " + message)
        }
    }

    /// Prints `message` as a warning on standard error (plain text, or the JSON object).
    static func printWarning(_ message: String) {
        if json, let line = try? JSONOutput.line(["warning": FailureLine(message: message, code: nil)]) {
            StandardError.write(line + "\n")
        } else {
            printError("warning: " + message)
        }
    }

    private struct FailureLine: Encodable {
        var message: String
        var code: String?
    }
}

/// The one JSON style of every `--json` output: one compact object per line, keys sorted,
/// slashes and non-ASCII characters not escaped. (Documents keep their own field order.)
enum JSONOutput {
    /// `value` as one line of JSON (no trailing newline).
    static func line<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// A dictionary of JSON values as one line.
    static func line(_ object: [String: Any]) throws -> String {
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }
}

/// Writes one JSON object per line (kept for the commands that build dictionaries).
func jsonLine(_ object: [String: Any]) throws -> String { try JSONOutput.line(object) }

/// Reads a command-line value: `-` means all of standard input (one trailing newline dropped,
/// as shells add one), at most ``standardInputLimit`` bytes; anything else is the value itself.
func argumentValue(_ text: String) throws -> String {
    guard text == "-" else { return text }
    var bytes = try readStandardInput(limit: standardInputLimit)
    // The newline byte alone: "\r\n" is one Character to Swift, and a value's own "\r" stays.
    if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
    guard let value = String(bytes: bytes, encoding: .utf8) else {
        throw CLIFailure(code: "invalidUTF8", message: "standard input is not valid UTF-8")
    }
    return value
}

/// The most a value given as `-` may hold: 256 MiB. Larger input (`/dev/zero`, a wrong file)
/// fails at once with a clear error instead of filling memory.
let standardInputLimit = 256 << 20

/// All of standard input, read with `read(2)` (Foundation's `readDataToEndOfFile` traps on a
/// read error), failing once more than `limit` bytes arrived.
func readStandardInput(limit: Int) throws -> [UInt8] {
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let n = chunk.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
        if n == 0 { return bytes }
        if n < 0 {
            if errno == EINTR { continue }
            throw CLIFailure(code: "unreadableInput", message: "standard input could not be read: \(String(cString: strerror(errno)))")
        }
        guard bytes.count + n <= limit else {
            throw CLIFailure(code: "inputTooLarge",
                             message: "standard input holds more than \(limit >> 20) MiB, the most a value given as '-' may hold")
        }
        bytes.append(contentsOf: chunk[..<n])
    }
}
