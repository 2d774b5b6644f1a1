import ArgumentParser
import Foundation

/// Options shared by commands that work on an LMDB environment folder only (raw key/value
/// commands, backup, fill, verify, torture): a URL is refused with a message saying so.
struct PathOption: ParsableArguments {
    @Option(name: .customLong("path"), help: ArgumentHelp("The environment folder (holds data.mdb and lock.mdb). Default: $DEPOT_PATH.", valueName: "dir"))
    var explicitPath: String?

    /// Accepted only to say that this command needs a folder.
    @Option(name: .customLong("url"), help: .hidden) var explicitURL: String?

    /// `--path`, else `DEPOT_PATH`.
    var path: String { explicitPath ?? Self.environmentPath ?? "" }

    static var environmentPath: String? {
        guard let value = ProcessInfo.processInfo.environment["DEPOT_PATH"], !value.isEmpty else { return nil }
        return value
    }

    /// The command being run, for messages (`backup`).
    static var commandName: String {
        CommandLine.arguments.dropFirst().first { !$0.hasPrefix("-") } ?? "this command"
    }

    /// The failure for a command that needs an LMDB folder and was given a server.
    static func lmdbOnly(_ command: String, given: String) -> ValidationError {
        // Called a PostgreSQL store only when it is one (a postgres:// URL), not for any text.
        let scheme = StoreLocation.scheme(of: given)?.lowercased()
        let what = scheme == "postgres" || scheme == "postgresql" ? "is a PostgreSQL store"
            : scheme.map { "is a URL (scheme '\($0)'), not a folder" } ?? "is not a folder path"
        return ValidationError("'depot \(command)' works on an LMDB store folder only (--path DIR); '\(given)' \(what)")
    }

    func validate() throws {
        if let explicitURL { throw Self.lmdbOnly(Self.commandName, given: StoreLocation.redacted(explicitURL)) }
        if let explicitPath, explicitPath.isEmpty { throw ValidationError("--path must not be empty") }
        if let path = explicitPath ?? Self.environmentPath, StoreLocation.scheme(of: path) != nil {
            throw Self.lmdbOnly(Self.commandName, given: StoreLocation.redacted(path))
        }
        if explicitPath == nil && Self.environmentPath == nil {
            if let url = StoreOption.environmentURL { throw Self.lmdbOnly(Self.commandName, given: StoreLocation.redacted(url)) }
            throw ValidationError("Missing '--path <dir>' (or set DEPOT_PATH to the store's folder)")
        }
    }
}
