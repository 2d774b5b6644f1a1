import ArgumentParser
import DepotLMDB
import Foundation

/// The options naming one named database of an LMDB folder (`put`, `get`, `delete`, `list`, `fill`).
struct RawDatabase: ParsableArguments {
    @OptionGroup var location: PathOption
    @Option(help: "The named database (put and fill create it when missing).") var db: String
    @OptionGroup var output: OutputOptions

    /// The existing environment and named database (a missing one is an error, never created).
    func existing(readOnly: Bool) throws -> (Environment, Database<BytesCodec, BytesCodec>) {
        let env = try openExisting(location.path, readOnly: readOnly)
        return (env, try openExistingDatabase(env, db))
    }
}

/// The options naming one raw entry of `put`, `get` and `delete`: the database and the key.
struct RawEntry: ParsableArguments {
    @OptionGroup var database: RawDatabase
    @Argument(help: "The key (1 to \(Environment.standardMaxKeySize) bytes of UTF-8).") var key: String

    func validate() throws { try RawArguments.checkKey(key) }

    var db: String { database.db }
    var output: OutputOptions { database.output }

    /// The error for a key the database does not hold.
    var notFound: CLIFailure { CLIFailure(code: "notFound", message: "key '\(key)' not found in database '\(db)'") }

    /// The error for a key `put --no-overwrite` found already stored.
    var exists: CLIFailure {
        CLIFailure(code: "keyExists", message: "key '\(key)' already exists in database '\(db)' (--no-overwrite keeps it)")
    }

    /// The existing environment and named database (a missing one is an error, never created).
    func existing(readOnly: Bool) throws -> (Environment, Database<BytesCodec, BytesCodec>) { try database.existing(readOnly: readOnly) }
}

struct PutCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "put",
        abstract: "Store VALUE under KEY in a named database, as exactly their UTF-8 bytes.")

    @OptionGroup var entry: RawEntry
    @Flag(help: "Fail if the key already exists.") var noOverwrite = false
    @Argument(help: "The value; '-' reads it from standard input (at most 256 MiB; one trailing newline dropped).") var value: String

    func validate() throws { try RawArguments.checkDatabase(entry.db, writing: true) }

    func run() throws {
        try reportingErrors {
            let value = try argumentValue(value)
            let env = try Environment.open(path: entry.database.location.path)
            let database = try env.openDatabase(entry.db, key: StringCodec.self, value: StringCodec.self)
            do {
                try env.write { try $0.put(value, forKey: entry.key, in: database, flags: noOverwrite ? .noOverwrite : []) }
            } catch LMDBError.keyExists where noOverwrite {
                throw entry.exists
            }
            StandardOutput.noteCommitted("the entry was stored")
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
            exact bytes are written, then a newline (which 'put KEY -' drops again). --json prints {"key": …, "value": …} (valueHex: the bytes in hex, \
            for a value that is not UTF-8).
            """)

    @OptionGroup var entry: RawEntry
    @Flag(help: "Write the value's exact bytes (then a newline) even on a terminal.") var raw = false

    func validate() throws { try RawArguments.checkDatabase(entry.db, writing: false) }

    func run() throws {
        try reportingErrors {
            let (env, database) = try entry.existing(readOnly: true)
            guard let value = try env.read({ txn in try txn.get(Array(entry.key.utf8), in: database) }) else { throw entry.notFound }
            if entry.output.json {
                print(try JSONOutput.line(EntryJSON.object(key: Array(entry.key.utf8), value: value)))
            } else if !raw && isatty(STDOUT_FILENO) == 1 {
                print(EntryJSON.terminalText(value))
            } else {
                try StandardOutput.write(Array(value))
                try StandardOutput.write("\n")
            }
        }
    }
}

struct DeleteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete KEY. A missing key exits with status 1.")

    @OptionGroup var entry: RawEntry

    func validate() throws { try RawArguments.checkDatabase(entry.db, writing: true) }

    func run() throws {
        try reportingErrors {
            let (env, database) = try entry.existing(readOnly: false)
            if !(try env.write { try $0.delete(Array(entry.key.utf8), in: database) }) { throw entry.notFound }
            StandardOutput.noteCommitted("the entry was deleted")
        }
    }
}

struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List keys and values of a named database in key order (tab-separated, or JSON Lines).",
        discussion: "Tab-separated lines write a backslash, tab, newline or carriage return in a key or value as \\\\, \\t, \\n or \\r; bytes that are not UTF-8 as 0x… hex.")

    @OptionGroup var database: RawDatabase
    @Option(help: "Only keys starting with this prefix.") var prefix: String?
    @Option(help: "At most this many entries.") var limit: Int?

    var db: String { database.db }
    var output: OutputOptions { database.output }

    func validate() throws {
        try RawArguments.checkDatabase(db, writing: false)
        if let limit, limit < 0 { throw ValidationError("--limit must be 0 or more, got \(limit)") }
        if let prefix, prefix.isEmpty { throw ValidationError("--prefix must not be empty") }
    }

    func run() throws {
        try reportingErrors {
            let (env, named) = try database.existing(readOnly: true)
            let range: KeyRange<[UInt8]> = prefix.map { .prefix(Array($0.utf8)) } ?? .all
            var lines: [String] = []
            try env.read { txn in
                var count = 0
                let max = limit ?? .max
                guard max > 0 else { return }
                // A damaged node can point past the file: checked before its bytes are copied.
                let region = try txn.usedMapRegion()
                try txn.forEachRaw(in: named, range: range) { rawKey, rawValue in
                    if let region, !region.contains(rawKey) || !region.contains(rawValue) {
                        throw CLIFailure(code: "damaged", message: "entry \(count + 1) of database '\(db)' points past the used part of the data file; run 'depot verify' and restore from a backup")
                    }
                    let key = [UInt8](rawKey), value = [UInt8](rawValue)
                    if output.json {
                        lines.append(try jsonLine(EntryJSON.object(key: key, value: value)))
                    } else {
                        lines.append(LineField.escaped(display(key)) + "\t" + LineField.escaped(display(value)))
                    }
                    count += 1
                    return count < max
                }
            }
            if !lines.isEmpty { print(lines.joined(separator: "\n")) }
        }
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

/// Text written as one field of a line of output.
enum LineField {
    /// `text` with backslash, tab, newline and carriage return escaped (`\\`, `\t`, `\n`, `\r`),
    /// so that every entry is one line and a tab between fields is the only one.
    static func escaped(_ text: String) -> String {
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
