import ArgumentParser
import DepotLMDB
import Foundation

/// The `depot` command-line tool.
@main
struct DepotCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "depot",
        abstract: "Depot: an embedded LMDB key/value and document engine.",
        subcommands: [
            DemoCommand.self, PutCommand.self, GetCommand.self, DeleteCommand.self, ListCommand.self,
            StatCommand.self, BackupCommand.self, FillCommand.self, ExportCommand.self, QueryCommand.self, SeedCommand.self,
            TortureCommand.self, HoldReaderCommand.self, VerifyCommand.self, KVCommand.self,
        ]
    )

    static func main() async {
        do {
            var command = try parseAsRoot(preprocess(Array(CommandLine.arguments.dropFirst())))
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}

/// Options shared by commands that work on one environment folder.
struct PathOption: ParsableArguments {
    @Option(name: .long, help: "The environment folder (holds data.mdb and lock.mdb).")
    var path: String
}

/// Prints `message` to standard error.
func printError(_ message: String) {
    FileHandle.standardError.write(Data(("depot: " + message + "\n").utf8))
}

/// Runs `body`, turning thrown errors into a message on standard error and exit status 1.
func reportingErrors<R>(_ body: () throws -> R) throws -> R {
    do {
        return try body()
    } catch let error as ExitCode {
        throw error
    } catch let error as CleanExit {
        throw error
    } catch {
        printError("error: \(error)")
        throw ExitCode(1)
    }
}

/// Opens an existing environment for reading; a missing one is a clear error, never created.
func openExisting(_ path: String, readOnly: Bool = true) throws -> Environment {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue,
          FileManager.default.fileExists(atPath: path + "/data.mdb") else {
        printError("error: no environment at '\(path)' (expected a folder holding data.mdb)")
        throw ExitCode(1)
    }
    return try Environment.open(path: path, options: EnvironmentOptions(readOnly: readOnly))
}

/// Opens an existing named database; a missing one is a clear error.
func openExistingDatabase(_ env: Environment, _ name: String) throws -> Database<BytesCodec, BytesCodec> {
    do {
        return try env.openDatabase(name, create: false)
    } catch LMDBError.notFound {
        printError("error: no database named '\(name)' in '\(env.path)'")
        throw ExitCode(1)
    }
}

/// Shows bytes as text when they are valid UTF-8, else as `0x…` hex.
func display(_ bytes: [UInt8]) -> String {
    if let text = validUTF8String(bytes) { return text }
    return "0x" + bytes.map { String(format: "%02x", $0) }.joined()
}

/// Writes one JSON object per line.
func jsonLine(_ object: [String: Any]) throws -> String {
    let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
    return String(decoding: data, as: UTF8.self)
}
