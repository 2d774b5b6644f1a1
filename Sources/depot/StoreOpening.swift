import ArgumentParser
import Depot
import DepotLMDB
import Foundation
#if Postgres
import DepotPostgres
#endif

/// How a command uses the store it opens.
enum StoreAccess {
    /// Reads an existing store (a missing one is an error, never created).
    case read
    /// Writes to an existing store.
    case write
    /// Writes, creating the store when it does not exist.
    case create
}

extension StoreOption {
    /// Opens the store on the driver its location names (LMDB for a folder, PostgreSQL for a
    /// `postgres://` URL), with the key when one was given, runs `body`, and closes the
    /// connections of a server. Every document command opens its store here.
    ///
    /// A record that is encrypted, or that the given key does not open, is reported naming the
    /// store and how to pass the key; never with the record's content or the key.
    func withStore<R>(_ access: StoreAccess, _ body: (Store) throws -> R) throws -> R {
        let location = try location
        let transform = try key.transform()
        let (store, close) = try Self.open(location, access: access, transform: transform)
        defer { close() }
        do {
            return try body(store)
        } catch let error as DepotError where error.code == .transformRequired {
            throw CLIFailure(code: error.code.rawValue, message: Self.encryptedMessage(error, at: location))
        } catch let error as DepotError where error.code == .transformFailed && transform != nil {
            let record = [error.collection, error.id].compactMap { $0 }.joined(separator: "/")
            throw CLIFailure(code: error.code.rawValue, message: "record \(record) of '\(location.display)' does not open with the given key: "
                             + "the wrong key (or --key-id), a store that is not encrypted, or a record that was changed")
        }
    }

    /// The message for a sealed record read without the key.
    static func encryptedMessage(_ error: DepotError, at location: StoreLocation) -> String {
        let record = [error.collection, error.id].compactMap { $0 }.joined(separator: "/")
        var message = record.isEmpty ? "the store '\(location.display)' is encrypted (its records are sealed by a record transform): "
            : "the store '\(location.display)' is encrypted (record \(record) is sealed by a record transform): "
        message += KeyOption.canDecrypt ? KeyOption.howToGive : "decrypting needs a depot built with 'swift build --traits Crypto', then " + KeyOption.howToGive
        return message
    }

    /// The store the options name, opened with the key when one was given, and what closes it
    /// (for a command that opens its store late, as import does; others use ``withStore(_:_:)``).
    func openStore(_ access: StoreAccess) throws -> (store: Store, close: () -> Void) {
        try Self.open(location, access: access, transform: key.transform())
    }

    /// The store at `location` and what closes it.
    private static func open(_ location: StoreLocation, access: StoreAccess, transform: (any RecordTransform)?) throws -> (Store, () -> Void) {
        switch location {
        case .folder(let path):
            if access == .create {
                var options = StoreOptions()
                options.recordTransform = transform
                return (try Store(path: path, options: options), {})
            }
            return (try Store(environment: openExisting(path, readOnly: access == .read), recordTransform: transform), {})
        case .url(let url):
            #if Postgres
            // Only a command that may create the store creates its schema (as with a folder).
            var configuration = try PostgresConfiguration(url: url)
            configuration.createsSchema = access == .create
            let driver = try PostgresDriver(configuration: configuration)
            do {
                return (try Store(driver: driver, recordTransform: transform), { driver.close() })
            } catch {
                driver.close()
                throw error
            }
            #else
            throw CLIFailure(code: "driverUnavailable",
                             message: "'\(location.display)' is a PostgreSQL store, and this depot was built without the Postgres trait: build it with 'swift build --traits Postgres'")
            #endif
        }
    }

    /// The alias `name` of `store` (one with collections, or with key/value entries only); a
    /// missing one is an error naming the store and its aliases.
    static func existingAlias(_ name: String, of store: Store) throws -> Store {
        let aliases = try store.aliases()
        let known = try aliases.contains(name) || store.holdsKeyValueEntries(alias: name)
        guard known else {
            throw CLIFailure(code: "noAlias", message: "no alias named '\(name)' in '\(store.path)' (aliases: \(aliases.isEmpty ? "none" : aliases.joined(separator: ", ")))")
        }
        return try store.alias(name)
    }
}
