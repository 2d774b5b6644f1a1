import ArgumentParser
import DepotLMDB
import Foundation

/// The `depot` command-line tool.
@main
struct DepotCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "depot",
        abstract: "Depot: an embedded LMDB key/value and document engine (and its PostgreSQL driver).",
        discussion: """
            Stores: every command takes the store as --path DIR (an LMDB folder) or, for the document commands (seed, import, \
            export, query, collections, stat, doc, kv), --url postgres://user@host/database?schema=… (a PostgreSQL store, in a \
            depot built with --traits Postgres); without either, DEPOT_PATH or DEPOT_URL names it. The other commands (put, get, \
            delete, list, backup, fill, verify, torture) work on LMDB folders only and say so when given a URL.

            Encrypted stores (AESGCMTransform): the commands that read or write records take the key from a file, --key-file \
            PATH (32 bytes, or their base64 text), or from DEPOT_KEY (base64); never as an argument. Decrypting needs a depot \
            built with --traits Crypto. Without the key, verify checks pages and envelopes and counts the encrypted records it \
            could not check; export, query and doc get refuse, naming the store and how to pass the key.

            Output: every command takes --json. Commands that print a stream (export, query, list, collections, kv list) \
            print JSON Lines, one object per line; commands that print a report (stat, verify, import, seed, backup, fill, \
            doc put, get, kv get) print one JSON object; commands that change one entry (put, delete, kv set, kv delete, \
            doc delete) print nothing on success: their exit status says it. Errors, usage errors included, are one JSON object on standard error: \
            {"error": {"message": …, "code": …}}; warnings are {"warning": {"message": …}}. Exit status: 0 on success, 1 when \
            the command failed (or found nothing, as get), 64 for usage errors.
            """,
        version: DepotVersion.current,
        subcommands: [
            DemoCommand.self, PutCommand.self, GetCommand.self, DeleteCommand.self, ListCommand.self,
            StatCommand.self, BackupCommand.self, FillCommand.self, CollectionsCommand.self, DocCommand.self,
            ExportCommand.self, ImportCommand.self, QueryCommand.self, SeedCommand.self,
            TortureCommand.self, HoldReaderCommand.self, VerifyCommand.self, KVCommand.self, ForkProbeCommand.self,
        ]
    )

    static func main() async {
        if let position = RawArguments.firstInvalidUTF8Argument() {
            OutputConvention.printFailure("argument \(position) is not valid UTF-8 (keys and names are stored as their exact UTF-8 bytes)", code: "usage")
            exit(withError: ExitCode.validationFailure)
        }
        let arguments = Array(CommandLine.arguments.dropFirst())
        // `verify` reads in a child process and reports the child's signal itself.
        if !(arguments.first == "verify" && arguments.contains("--child")) { MemoryFaultGuard.install() }
        if let message = CommandSuggestions.unknownCommand(in: arguments, root: Self.self) {
            if OutputConvention.json {
                OutputConvention.printFailure(message, code: "usage")
            } else {
                printError(message)
            }
            exit(withError: ExitCode.validationFailure)
        }
        do {
            var command = try parseAsRoot(preprocess(arguments))
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            // What the command printed is written, or the command failed.
            try reportingErrors { try StandardOutput.finish() }
        } catch {
            // With --json, a usage error is one JSON object on standard error too.
            let code = exitCode(for: error)
            if OutputConvention.json, !(error is ExitCode), code != .success {
                OutputConvention.printFailure(message(for: error), code: "usage")
                exit(withError: code)
            }
            exit(withError: error)
        }
    }
}

/// `--json` of every command: the convention is ``OutputConvention``.
struct OutputOptions: ParsableArguments {
    @Flag(help: "Print JSON: JSON Lines for streams, one object for reports, errors as one JSON object on standard error (see 'depot --help').")
    var json = false
}

/// Prints `message` to standard error.
func printError(_ message: String) {
    StandardError.write("depot: " + terminalSafe(message) + "\n")
}

/// `text` with its control characters (a key's or name's escape sequences, carriage returns,
/// bells) written as `\u{1B}`, so that a message quoting user input never drives the terminal;
/// line breaks and tabs stay (messages of more than one line, libpq's indented hints).
func terminalSafe(_ text: String) -> String {
    func escaped(_ scalar: Unicode.Scalar) -> Bool {
        scalar != "\n" && scalar != "\t" && scalar.properties.generalCategory == .control
    }
    guard text.unicodeScalars.contains(where: escaped) else { return text }
    var out = ""
    for scalar in text.unicodeScalars {
        if escaped(scalar) {
            out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
        } else {
            out.unicodeScalars.append(scalar)
        }
    }
    return out
}

/// A failure the tool itself finds (no store, no database): reported like any other error, as
/// plain text or, with `--json`, as a JSON object with `code`.
struct CLIFailure: Error, CustomStringConvertible {
    /// A stable machine code, e.g. `noEnvironment`.
    let code: String
    let message: String
    /// Where bad input was, when the failure is about a file (a seed tree's file and JSON path).
    var file: String? = nil
    var jsonPath: String? = nil
    var description: String { message }
}

/// Throws when `path` is a folder this process may not enter (its files then look missing).
func refuseUnenterableFolder(_ path: String) throws {
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue, access(path, X_OK) != 0 {
        throw CLIFailure(code: "permissionDenied", message: "cannot open '\(path)': permission denied (the folder cannot be entered)")
    }
}

/// Opens an existing environment for reading; a missing one is a clear error, never created.
func openExisting(_ path: String, readOnly: Bool = true) throws -> Environment {
    try refuseUnenterableFolder(path)
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue,
          FileManager.default.fileExists(atPath: path + "/data.mdb") else {
        throw CLIFailure(code: "noEnvironment", message: "no environment at '\(path)' (expected a folder holding data.mdb)")
    }
    var env = try Environment.open(path: path, options: EnvironmentOptions(readOnly: readOnly))
    // Each process creating a database or two can leave a store with more named databases than
    // one open allows (LMDB's maxdbs, 256 by default): a command that reads them all (stat,
    // verify, export) would fail with MDB_DBS_FULL. Opened again with room for every one.
    // Cheap test first: the main database's entries bound the named databases (raw keys there too).
    let named = try env.stat().entries > env.options.maxDatabases - 8 ? env.databaseNames().count : 0
    if named + 8 > env.options.maxDatabases {
        try env.close()
        var options = EnvironmentOptions(readOnly: readOnly)
        options.maxDatabases = min(named + 64, EnvironmentOptions.maxSlotCount)
        env = try Environment.open(path: path, options: options)
    }
    UnguardedReads.watch(env)
    return env
}

/// Opens an existing named database; a missing one is a clear error.
func openExistingDatabase(_ env: Environment, _ name: String) throws -> Database<BytesCodec, BytesCodec> {
    do {
        return try env.openDatabase(name, create: false)
    } catch LMDBError.notFound {
        throw CLIFailure(code: "noDatabase", message: "no database named '\(name)' in '\(env.path)'")
    }
}

/// Shows bytes as text when they are valid UTF-8, else as `0x…` hex.
func display(_ bytes: [UInt8]) -> String {
    if let text = validUTF8String(bytes) { return text }
    return "0x" + bytes.map { String(format: "%02x", $0) }.joined()
}
