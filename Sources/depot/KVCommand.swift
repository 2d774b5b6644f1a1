import ArgumentParser
import Depot
import Foundation

struct KVCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kv",
        abstract: "Set, get, delete or list values of the key/value facade (store.keyValue(), Persistent objects).",
        discussion: """
            VALUE is JSON when it parses as JSON (42, true, null, "text", [1, 2], {"a": 1}), else it is stored \
            as a string: 'depot kv set name Ada' stores the string "Ada". --string stores VALUE as a string \
            always ('depot kv set zip 01234 --string'); --json-value refuses VALUE unless it is JSON. JSON \
            that Depot cannot store (a number past 64 bits or beyond a Double, nesting past 512 levels) is \
            refused, never stored as a string in its place: pass --string for that. So is an object \
            with a repeated key.
            Examples:
              depot kv set name Ada
              depot kv set limits '{"max": 10}'
              depot kv get name
              depot kv list --prefix li
              depot kv delete name
            """,
        subcommands: [KVSet.self, KVGet.self, KVDelete.self, KVList.self])

    /// Options naming the store and alias of the facade.
    struct Target: ParsableArguments {
        @OptionGroup var location: StoreOption
        @Option(help: "The store alias.") var alias: String = Store.defaultAlias
        @OptionGroup var output: OutputOptions

        func validate() throws {
            do { try Store.validateAliasName(alias) } catch { throw ValidationError("--alias: \(error)") }
        }

        /// The error for a key that holds no value (naming the alias whose facade was read).
        func notFound(_ key: String) -> CLIFailure {
            CLIFailure(code: "notFound", message: "key '\(key)' not found in the key/value entries of alias '\(alias)'")
        }

        /// Runs `body` with the facade of the store; `access` says whether the store may be created.
        /// A command that only reads names a missing alias (other than the default one, which
        /// a new store has no record of yet) as such rather than as a missing key.
        func withFacade<R>(_ access: StoreAccess, _ body: (KeyValueStore) throws -> R) throws -> R {
            try location.withStore(access) { store in
                let view = access == .create || alias == Store.defaultAlias
                    ? try store.alias(alias) : try StoreOption.existingAlias(alias, of: store)
                return try body(view.keyValue())
            }
        }
    }

    struct KVSet: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set", abstract: "Store VALUE under KEY: JSON when it parses as JSON, else a string.")
        @OptionGroup var target: Target
        @Flag(help: "Store VALUE as a string even when it parses as JSON.") var string = false
        @Flag(help: "Refuse VALUE unless it is JSON.") var jsonValue = false
        @Argument(help: "The key.") var key: String
        @Argument(help: "The value; '-' reads it from standard input (at most 256 MiB).") var value: String

        func validate() throws {
            if key.isEmpty { throw ValidationError("KEY must not be empty") }
            if string && jsonValue { throw ValidationError("--string and --json-value cannot be given together") }
        }

        /// The value the text stands for, by the rule in `depot kv --help`.
        static func parse(_ text: String, asString: Bool, requireJSON: Bool) throws -> DocumentValue {
            if asString { return .string(text) }
            do {
                return try DocumentValue(jsonString: text)
            } catch let error as BinaryCodecError where error.isWellFormedJSONRefused && JSONParser.isWellFormed(text) {
                // JSON that Depot cannot hold (a number past its types, nesting too deep): never
                // stored as a string in its place without being asked to (--string).
                throw CLIFailure(code: "unstorableJSON", message: "VALUE is JSON that Depot cannot store (\(error)); pass --string to store it as text")
            } catch {
                if requireJSON { throw CLIFailure(code: "invalidJSON", message: "VALUE is not valid JSON (--json-value): \(error)") }
                return .string(text)
            }
        }

        func run() throws {
            try reportingErrors {
                let parsed = try Self.parse(argumentValue(value), asString: string, requireJSON: jsonValue)
                try target.withFacade(.create) { kv in
                    kv[key] = parsed
                    try kv.save()
                    StandardOutput.noteCommitted("the entry was stored")
                }
            }
        }
    }

    struct KVGet: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "get", abstract: "Print the value under KEY as JSON. A missing key exits with status 1.")
        @OptionGroup var target: Target
        @Argument(help: "The key.") var key: String

        func validate() throws {
            if key.isEmpty { throw ValidationError("KEY must not be empty") }
        }

        func run() throws {
            try reportingErrors {
                guard let value = try target.withFacade(.read, { try $0.value(forKey: key, as: DocumentValue.self) }) else { throw target.notFound(key) }
                print(try value.jsonString(sortedKeys: true))
            }
        }
    }

    struct KVDelete: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete the value under KEY. A missing key exits with status 1.")
        @OptionGroup var target: Target
        @Argument(help: "The key.") var key: String

        func validate() throws {
            if key.isEmpty { throw ValidationError("KEY must not be empty") }
        }

        func run() throws { try reportingErrors { if !(try target.withFacade(.write) { try $0.deletePermanently(key) }) { throw target.notFound(key) } } }
    }

    struct KVList: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List the keys (one a line, backslash, tab, newline and carriage return escaped as \\\\, \\t, \\n, \\r; or JSON Lines {\"key\": …}) in key order.")
        @OptionGroup var target: Target
        @Option(help: "Only keys starting with this prefix.") var prefix: String = ""
        @Option(help: "At most this many keys.") var limit: Int?

        func validate() throws {
            if let limit, limit < 0 { throw ValidationError("--limit must be 0 or more, got \(limit)") }
        }

        func run() throws {
            try reportingErrors {
                let keys = try target.withFacade(.read) { try $0.keys(withPrefix: prefix, limit: limit) }
                // Plain keys one a line, escaped as `list` escapes them (a newline in a key would
                // split it into two lines).
                let lines = try keys.map { target.output.json ? try JSONOutput.line(["key": $0]) : LineField.escaped($0) }
                if !lines.isEmpty { print(lines.joined(separator: "\n")) }
            }
        }
    }
}

extension BinaryCodecError {
    /// Whether the error is a refusal of what Depot cannot store (a number beyond its types, a
    /// repeated key, nesting too deep) rather than of the grammar: the text may still not be
    /// JSON further on (`JSONParser.isWellFormed` says).
    var isWellFormedJSONRefused: Bool {
        switch self {
        case .rejectedJSON, .nestingTooDeep: return true
        default: return false
        }
    }
}
