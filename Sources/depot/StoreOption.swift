import ArgumentParser
import Depot
import Foundation

/// Where a store is: an LMDB folder or the URL of a server (`postgres://…`).
enum StoreLocation: Equatable {
    /// An LMDB environment folder (holds data.mdb and lock.mdb).
    case folder(String)
    /// A server URL (`postgres://` or `postgresql://`).
    case url(String)

    /// The URL schemes of PostgreSQL stores.
    static let postgresSchemes = ["postgres", "postgresql"]

    /// The scheme of `text` when it is written as a URL (`scheme://…`), else nil.
    static func scheme(of text: String) -> String? {
        guard let range = text.range(of: "://"), range.lowerBound > text.startIndex else { return nil }
        let scheme = text[..<range.lowerBound]
        guard scheme.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == "." }) else { return nil }
        return scheme.lowercased()
    }

    /// `url` without its password, for messages (`postgres://ada:***@host/db`).
    static func redacted(_ url: String) -> String {
        guard var components = URLComponents(string: url) else {
            // Not parseable: keep the scheme and host part only up to any '@'.
            guard let at = url.lastIndex(of: "@"), let scheme = scheme(of: url) else { return url }
            return scheme + "://***" + url[at...]
        }
        if components.password != nil { components.password = "***" }
        return components.string ?? url
    }

    /// How messages name the store: the folder, or the URL without its password.
    var display: String {
        switch self {
        case .folder(let path): return path
        case .url(let url): return Self.redacted(url)
        }
    }
}

/// `--path DIR` or `--url URL` of the commands that work on documents through ``Store`` (seed,
/// import, export, query, collections, stat, doc, kv), with the key of an encrypted store. Without
/// either option, `DEPOT_URL` or `DEPOT_PATH` names the store.
struct StoreOption: ParsableArguments {
    @Option(name: .customLong("path"), help: ArgumentHelp("The LMDB store folder (holds data.mdb and lock.mdb). Default: $DEPOT_PATH.", valueName: "dir"))
    var explicitPath: String?

    @Option(name: .customLong("url"), help: ArgumentHelp(
        "A PostgreSQL store: postgres://user@host:port/database?schema=… (needs a depot built with --traits Postgres; prefer PGPASSWORD to a password in the URL). Default: $DEPOT_URL.",
        valueName: "url"))
    var explicitURL: String?

    @OptionGroup var key: KeyOption

    static var environmentURL: String? {
        guard let value = ProcessInfo.processInfo.environment["DEPOT_URL"], !value.isEmpty else { return nil }
        return value
    }

    func validate() throws { _ = try location }

    /// The store the options name: `--path` or `--url` (never both), else `DEPOT_URL` or
    /// `DEPOT_PATH` (never both).
    var location: StoreLocation {
        get throws {
            switch (explicitPath, explicitURL) {
            case (_?, _?):
                throw ValidationError("give --path (an LMDB folder) or --url (a server), not both")
            case (let path?, nil):
                return try Self.folder(path, from: "--path")
            case (nil, let url?):
                return try Self.url(url, from: "--url")
            case (nil, nil):
                switch (PathOption.environmentPath, Self.environmentURL) {
                case (_?, _?):
                    throw ValidationError("both DEPOT_PATH and DEPOT_URL are set: pass --path or --url to choose the store")
                case (let path?, nil): return try Self.folder(path, from: "DEPOT_PATH")
                case (nil, let url?): return try Self.url(url, from: "DEPOT_URL")
                case (nil, nil):
                    throw ValidationError("Missing '--path <dir>' or '--url <url>' (or set DEPOT_PATH to the store's folder, or DEPOT_URL to its server)")
                }
            }
        }
    }

    private static func folder(_ path: String, from source: String) throws -> StoreLocation {
        if path.isEmpty { throw ValidationError("\(source) must not be empty") }
        if scheme(path) != nil {
            throw ValidationError("\(source) takes a folder; '\(StoreLocation.redacted(path))' is a URL: pass it with \(source == "--path" ? "--url" : "DEPOT_URL")")
        }
        return .folder(path)
    }

    private static func url(_ url: String, from source: String) throws -> StoreLocation {
        if url.isEmpty { throw ValidationError("\(source) must not be empty") }
        guard let scheme = scheme(url) else {
            throw ValidationError("\(source) takes a URL such as postgres://user@host/database; for an LMDB folder use \(source == "--url" ? "--path" : "DEPOT_PATH")")
        }
        guard StoreLocation.postgresSchemes.contains(scheme) else {
            throw ValidationError("\(source): unknown store URL scheme '\(scheme)' (depot opens postgres:// and postgresql:// URLs)")
        }
        return .url(url)
    }

    private static func scheme(_ text: String) -> String? { StoreLocation.scheme(of: text) }

    /// The LMDB folder, or a failure saying that `command` works on LMDB stores only.
    func folder(for command: String) throws -> String {
        switch try location {
        case .folder(let path): return path
        case .url(let url): throw PathOption.lmdbOnly(command, given: StoreLocation.redacted(url))
        }
    }
}

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
        ValidationError("'depot \(command)' works on an LMDB store folder only (--path DIR); '\(given)' is a PostgreSQL store")
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
