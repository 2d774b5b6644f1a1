#if Postgres
import ArgumentParser
import Depot
import DepotPostgres
import Foundation

/// `depot-pg`: the document commands of `depot` on a store kept in PostgreSQL. It lives in the
/// Postgres package (the root package never depends on postgres-nio) and is a thin layer over
/// the `Depot` API with the same options and output formats as `depot`, except that the store
/// is named by `--url postgres://…` (or `DEPOT_POSTGRES_URL`) instead of `--path`.
@main
struct DepotPG: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "depot-pg",
        abstract: "Depot's document commands on a PostgreSQL store.",
        discussion: """
            Every command takes --url postgres://user[:password]@host[:port]/database[?sslmode=…&schema=…]; \
            without it, DEPOT_POSTGRES_URL names the server (missing parts come from PGHOST, PGUSER, \
            PGPASSWORD, …). Prefer PGPASSWORD to a password in the URL, which other users can see in ps.
            """,
        subcommands: [SeedCommand.self, ExportCommand.self, QueryCommand.self, CollectionsCommand.self, StatCommand.self, KVCommand.self]
    )

    static func main() {
        do {
            var command = try parseAsRoot(preprocess(Array(CommandLine.arguments.dropFirst())))
            try command.run()
        } catch {
            exit(withError: error)
        }
    }

    /// Joins the three words after each `--where` into one value, so that values such as `-5`
    /// are not taken for options (as `depot` does).
    static func preprocess(_ arguments: [String]) -> [String] {
        var out: [String] = []
        var i = 0
        while i < arguments.count {
            if arguments[i] == "--where", i + 3 < arguments.count {
                out.append(arguments[i])
                out.append(arguments[(i + 1)...(i + 3)].joined(separator: String(QueryCommand.separator)))
                i += 4
                continue
            }
            out.append(arguments[i])
            i += 1
        }
        return out
    }
}

/// `--url`, else `DEPOT_POSTGRES_URL`.
struct URLOption: ParsableArguments {
    @Option(name: .customLong("url"), help: ArgumentHelp("The server: postgres://user@host:port/database?schema=… Default: $DEPOT_POSTGRES_URL.", valueName: "url"))
    var explicitURL: String?

    static var environmentURL: String? {
        guard let value = ProcessInfo.processInfo.environment["DEPOT_POSTGRES_URL"], !value.isEmpty else { return nil }
        return value
    }

    func validate() throws {
        if explicitURL == nil && Self.environmentURL == nil {
            throw ValidationError("Missing '--url postgres://…' (or set DEPOT_POSTGRES_URL)")
        }
    }

    /// Connects; errors name the server, never the password.
    func openStore() throws -> (Store, PostgresDriver) {
        let driver = try PostgresDriver(url: explicitURL ?? Self.environmentURL ?? "")
        do {
            return (try Store(driver: driver), driver)
        } catch {
            driver.close()
            throw error
        }
    }

    /// Runs `body` with the store, turning errors into a message on standard error and exit
    /// status 1.
    func withStore<R>(_ body: (Store, PostgresDriver) throws -> R) throws -> R {
        do {
            let (store, driver) = try openStore()
            defer { driver.close() }
            return try body(store, driver)
        } catch let error as ExitCode {
            throw error
        } catch {
            printError("error: \(error)")
            throw ExitCode(1)
        }
    }
}

/// Prints `message` to standard error.
func printError(_ message: String) {
    FileHandle.standardError.write(Data(("depot-pg: " + message + "\n").utf8))
}

/// The alias `name` of `store`; a missing one is a clear error.
func existingAlias(_ store: Store, _ name: String, at location: String) throws -> Store {
    let aliases = try store.aliases()
    guard aliases.contains(name) else {
        printError("error: no alias named '\(name)' in \(location) (aliases: \(aliases.isEmpty ? "none" : aliases.joined(separator: ", ")))")
        throw ExitCode(1)
    }
    return try store.alias(name)
}

/// `value` as one line of JSON, keys sorted (the `depot` style).
func jsonLine<T: Encodable>(_ value: T) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return String(decoding: try encoder.encode(value), as: UTF8.self)
}
#else
import Foundation

/// Built without the `Postgres` trait: says how to build the real command.
@main
enum DepotPGWithoutTrait {
    static func main() {
        FileHandle.standardError.write(Data("depot-pg: built without the Postgres trait (swift build --traits Postgres)\n".utf8))
        exit(2)
    }
}
#endif
