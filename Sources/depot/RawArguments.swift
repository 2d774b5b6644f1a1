import ArgumentParser
import Depot
import DepotLMDB
import Foundation

/// Checks of the raw key/value commands' arguments: misuse is a usage error (exit 64) that names
/// the argument, before any store is opened.
enum RawArguments {
    /// LMDB's largest key with its default build (`mdb_env_get_maxkeysize`).
    static let maxKeyBytes = Environment.standardMaxKeySize

    /// `--db` is not empty and fits LMDB (a database's name is a key of the main database); a
    /// command that writes may not touch the store's own databases.
    static func checkDatabase(_ name: String, writing: Bool) throws {
        try checkName(name, "--db")
        if writing && Store.isReservedDatabaseName(name) {
            throw ValidationError("--db '\(name)' is one of the document store's own databases (names beginning 'depot.'); "
                + "raw writes there would bypass its indexes and checksums: use 'depot doc', 'depot kv' or 'depot import'")
        }
    }

    /// A database name (`what`: the option that gave it) holds 1 to 511 bytes of UTF-8: LMDB
    /// keeps names as keys of its main database.
    static func checkName(_ name: String, _ what: String) throws {
        if name.isEmpty { throw ValidationError("\(what) must not be empty") }
        let count = name.utf8.count
        if count > maxKeyBytes {
            throw ValidationError("\(what) is \(count) bytes of UTF-8; database names hold at most \(maxKeyBytes) bytes")
        }
    }

    /// A key holds 1 to 511 bytes of UTF-8.
    static func checkKey(_ key: String, _ what: String = "KEY") throws {
        let count = key.utf8.count
        if count == 0 { throw ValidationError("\(what) must not be empty") }
        if count > maxKeyBytes {
            throw ValidationError("\(what) is \(count) bytes of UTF-8; keys hold at most \(maxKeyBytes) bytes")
        }
    }

    /// Every command-line argument is valid UTF-8 (Swift would otherwise repair it, so that two
    /// different keys could name the same record): the position of the first that is not, or nil.
    static func firstInvalidUTF8Argument() -> Int? {
        let argv = CommandLine.unsafeArgv
        for index in 1..<max(Int(CommandLine.argc), 1) {
            guard let argument = argv[index] else { continue }
            if String(validatingCString: argument) == nil { return index }
        }
        return nil
    }
}
