import ArgumentParser
import DepotLMDB
import Foundation

struct PutCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "put",
        abstract: "Store VALUE under KEY in a named database, as exactly their UTF-8 bytes.")

    @OptionGroup var location: PathOption
    @Option(help: "The named database (created if missing).") var db: String
    @Flag(help: "Fail if the key already exists.") var noOverwrite = false
    @Argument(help: "The key (1 to \(Environment.standardMaxKeySize) bytes of UTF-8).") var key: String
    @Argument(help: "The value; '-' reads it from standard input (one trailing newline dropped).") var value: String
    @OptionGroup var output: OutputOptions

    func validate() throws {
        try RawArguments.checkDatabase(db, writing: true)
        try RawArguments.checkKey(key)
    }

    func run() throws {
        try reportingErrors {
            let value = try argumentValue(value)
            let env = try Environment.open(path: location.path)
            let database = try env.openDatabase(db, key: StringCodec.self, value: StringCodec.self)
            try env.write { try $0.put(value, forKey: key, in: database, flags: noOverwrite ? .noOverwrite : []) }
        }
    }
}

struct GetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Print the value stored under KEY. A missing key exits with status 1.",
        discussion: """
            On a terminal, a value that is not printable text is escaped: \\xNN for each byte that is not \
            printable (and \\\\ for a backslash); --raw writes the exact bytes. Piped or redirected, the \
            exact bytes are written. --json prints {"key": …, "value": …} (valueHex: the bytes in hex, \
            for a value that is not UTF-8).
            """)

    @OptionGroup var location: PathOption
    @Option(help: "The named database.") var db: String
    @Argument(help: "The key.") var key: String
    @Flag(help: "Write the value's exact bytes even on a terminal.") var raw = false
    @OptionGroup var output: OutputOptions

    func validate() throws {
        try RawArguments.checkDatabase(db, writing: false)
        try RawArguments.checkKey(key)
    }

    func run() throws {
        try reportingErrors {
            let env = try openExisting(location.path)
            let database = try openExistingDatabase(env, db)
            let value = try env.read { txn in try txn.get(Array(key.utf8), in: database) }
            guard let value else {
                throw CLIFailure(code: "notFound", message: "key '\(key)' not found in database '\(db)'")
            }
            if output.json {
                print(try JSONOutput.line(EntryJSON.object(key: Array(key.utf8), value: value)))
            } else if !raw && isatty(STDOUT_FILENO) == 1 {
                print(EntryJSON.terminalText(value))
            } else {
                FileHandle.standardOutput.write(Data(value))
                FileHandle.standardOutput.write(Data("\n".utf8))
            }
        }
    }
}

struct DeleteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Delete KEY. A missing key exits with status 1.")

    @OptionGroup var location: PathOption
    @Option(help: "The named database.") var db: String
    @Argument(help: "The key.") var key: String
    @OptionGroup var output: OutputOptions

    func validate() throws {
        try RawArguments.checkDatabase(db, writing: true)
        try RawArguments.checkKey(key)
    }

    func run() throws {
        try reportingErrors {
            let env = try openExisting(location.path, readOnly: false)
            let database = try openExistingDatabase(env, db)
            let deleted = try env.write { try $0.delete(Array(key.utf8), in: database) }
            if !deleted {
                throw CLIFailure(code: "notFound", message: "key '\(key)' not found in database '\(db)'")
            }
        }
    }
}

struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List keys and values of a named database in key order (tab-separated, or JSON Lines).",
        discussion: "Tab-separated lines write a backslash, tab, newline or carriage return in a key or value as \\\\, \\t, \\n or \\r; bytes that are not UTF-8 as 0x… hex.")

    @OptionGroup var location: PathOption
    @Option(help: "The named database.") var db: String
    @Option(help: "Only keys starting with this prefix.") var prefix: String?
    @Option(help: "At most this many entries.") var limit: Int?
    @OptionGroup var output: OutputOptions

    func validate() throws {
        try RawArguments.checkDatabase(db, writing: false)
        if let limit, limit < 0 { throw ValidationError("--limit must be 0 or more, got \(limit)") }
        if let prefix, prefix.isEmpty { throw ValidationError("--prefix must not be empty") }
    }

    func run() throws {
        try reportingErrors {
            let env = try openExisting(location.path)
            let database = try openExistingDatabase(env, db)
            let range: KeyRange<[UInt8]> = prefix.map { .prefix(Array($0.utf8)) } ?? .all
            var lines: [String] = []
            try env.read { txn in
                var count = 0
                let max = limit ?? .max
                guard max > 0 else { return }
                // A damaged node can point past the file: checked before its bytes are copied.
                let region = try txn.usedMapRegion()
                try txn.forEachRaw(in: database, range: range) { rawKey, rawValue in
                    if let region, !region.contains(rawKey) || !region.contains(rawValue) {
                        throw CLIFailure(code: "damaged", message: "entry \(count + 1) of database '\(db)' points past the used part of the data file; run 'depot verify' and restore from a backup")
                    }
                    let key = [UInt8](rawKey), value = [UInt8](rawValue)
                    if output.json {
                        lines.append(try jsonLine(EntryJSON.object(key: key, value: value)))
                    } else {
                        lines.append(escapedField(display(key)) + "\t" + escapedField(display(value)))
                    }
                    count += 1
                    return count < max
                }
            }
            if !lines.isEmpty { print(lines.joined(separator: "\n")) }
        }
    }

    /// One field of a tab-separated line: backslash, tab, newline and carriage return escaped, so
    /// that every entry is one line and the tab between key and value is the only one.
    private func escapedField(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == 0x5C || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\t": out += "\\t"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}

/// How raw entries are shown: one JSON object, or text for a terminal.
enum EntryJSON {
    /// `{"key": …, "value": …}`, with `keyHex`/`valueHex` (lower-case hex) for bytes that are not UTF-8.
    static func object(key: [UInt8], value: [UInt8]) -> [String: Any] {
        var object: [String: Any] = [:]
        if let k = validUTF8String(key) { object["key"] = k } else { object["keyHex"] = hex(key) }
        if let v = validUTF8String(value) { object["value"] = v } else { object["valueHex"] = hex(value) }
        return object
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    /// `bytes` as a terminal may show them: printable UTF-8 text (tabs and newlines included) as
    /// it is; otherwise each byte that is not printable ASCII as `\xNN`, a backslash as `\\`.
    static func terminalText(_ bytes: [UInt8]) -> String {
        if let text = validUTF8String(bytes), !text.unicodeScalars.contains(where: {
            $0 != "\n" && $0 != "\t" && $0.properties.generalCategory == .control
        }) {
            return text
        }
        var out = ""
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\\"): out += "\\\\"
            case 0x20..<0x7F: out.unicodeScalars.append(Unicode.Scalar(byte))
            default: out += String(format: "\\x%02x", byte)
            }
        }
        return out
    }
}
