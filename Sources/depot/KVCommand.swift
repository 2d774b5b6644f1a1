import ArgumentParser
import Depot
import Foundation

struct KVCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kv",
        abstract: "Read or write a value of the key/value facade (store.keyValue(), Persistent objects) as JSON.",
        subcommands: [KVSet.self, KVGet.self])

    struct KVSet: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "set", abstract: "Store JSON VALUE under KEY.")
        @OptionGroup var location: PathOption
        @Option(help: "The store alias.") var alias: String = Store.defaultAlias
        @Argument(help: "The key.") var key: String
        @Argument(help: "The value, as JSON; '-' reads it from standard input.") var value: String

        func run() throws {
            try reportingErrors {
                let value = try argumentValue(value)
                let parsed: DocumentValue
                do { parsed = try DocumentValue(jsonString: value) } catch {
                    printError("error: VALUE is not valid JSON: \(error)")
                    throw ExitCode(1)
                }
                let kv = try Store(path: location.path).alias(alias).keyValue()
                kv[key] = parsed
                try kv.save()
            }
        }
    }

    struct KVGet: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "get", abstract: "Print the value under KEY as JSON.")
        @OptionGroup var location: PathOption
        @Option(help: "The store alias.") var alias: String = Store.defaultAlias
        @Argument(help: "The key.") var key: String

        func run() throws {
            try reportingErrors {
                let env = try openExisting(location.path)
                let kv = try Store(environment: env).alias(alias).keyValue()
                guard let value = try kv.value(forKey: key, as: DocumentValue.self) else {
                    printError("error: key '\(key)' not found")
                    throw ExitCode(1)
                }
                print(try value.jsonString(sortedKeys: true))
            }
        }
    }
}
