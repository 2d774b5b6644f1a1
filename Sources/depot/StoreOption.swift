import ArgumentParser
import Depot
import Foundation

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
