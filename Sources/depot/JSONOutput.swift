import ArgumentParser
import Foundation

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
/// as shells add one), anything else is the value itself.
func argumentValue(_ text: String) throws -> String {
    guard text == "-" else { return text }
    let data = FileHandle.standardInput.readDataToEndOfFile()
    guard var value = String(data: data, encoding: .utf8) else {
        printError("error: standard input is not valid UTF-8")
        throw ExitCode(1)
    }
    if value.hasSuffix("\r\n") { value.removeLast(1) } else if value.hasSuffix("\n") { value.removeLast() }
    return value
}
