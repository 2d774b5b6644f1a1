#if Postgres
import ArgumentParser
import Depot
import Foundation

struct QueryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Print the documents of a collection that match conditions, as JSON Lines (as depot query).",
        discussion: """
            --where takes three words: FIELD OP VALUE, with OP one of == != < <= > >= prefix. VALUE is \
            read as JSON when it parses (42, 1.5, true, null, "text"), else as text. Repeat --where to \
            combine conditions (AND). Conditions on indexed fields use the index.
            """)

    @OptionGroup var location: URLOption
    @Option(help: "The collection.") var collection: String
    @Option(help: "The store alias.") var alias: String = Store.defaultAlias
    @Option(name: .customLong("where"), help: ArgumentHelp("A condition: FIELD OP VALUE (three words).", valueName: "FIELD OP VALUE"))
    var conditions: [String] = []
    @Option(help: ArgumentHelp("Sort by a field; add :desc for descending. Repeatable.", valueName: "FIELD[:desc]"))
    var sort: [String] = []
    @Option(help: "At most this many documents.") var limit: Int?
    @Flag(help: "Print how the query ran (index or scan, rows examined) on standard error.") var explain = false

    static let separator: Character = "\u{1F}"

    func validate() throws {
        if let limit, limit < 0 { throw ValidationError("--limit must be 0 or more, got \(limit)") }
        _ = try parsedConditions()
    }

    func parsedConditions() throws -> [FieldCondition] {
        try conditions.map { raw in
            let parts = raw.split(separator: Self.separator, omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 3 else {
                throw ValidationError("--where needs three words: FIELD OP VALUE (got '\(raw.replacingOccurrences(of: String(Self.separator), with: " "))')")
            }
            do {
                return try FieldCondition(field: parts[0], operator: parts[1], text: parts[2])
            } catch let error as DepotError {
                throw ValidationError(error.message)
            }
        }
    }

    func run() throws {
        let conditions = try parsedConditions()
        let sorts = sort.map { key -> FieldSort in
            if key.hasSuffix(":desc") { return FieldSort(field: String(key.dropLast(5)), descending: true) }
            if key.hasSuffix(":asc") { return FieldSort(field: String(key.dropLast(4))) }
            return FieldSort(field: key)
        }
        try location.withStore { store, driver in
            try existingAlias(store, alias, at: driver.location).read { tx in
                guard try tx.collections().contains(collection) else {
                    printError("error: no collection named '\(collection)' in alias '\(alias)'")
                    throw ExitCode(1)
                }
                let (documents, plan) = try tx.query(collection: collection, conditions: conditions, sort: sorts, limit: limit)
                var out = ""
                for document in documents { out += try document.jsonLine() + "\n" }
                FileHandle.standardOutput.write(Data(out.utf8))
                if explain { printError("plan: \(plan)") }
            }
        }
    }
}

struct KVCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kv",
        abstract: "Read or write a value of the key/value facade as JSON (as depot kv).",
        subcommands: [KVSet.self, KVGet.self])

    struct KVSet: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "set", abstract: "Store JSON VALUE under KEY.")
        @OptionGroup var location: URLOption
        @Option(help: "The store alias.") var alias: String = Store.defaultAlias
        @Argument(help: "The key.") var key: String
        @Argument(help: "The value, as JSON.") var value: String

        func run() throws {
            let parsed: DocumentValue
            do { parsed = try DocumentValue(jsonString: value) } catch {
                printError("error: VALUE is not valid JSON: \(error)")
                throw ExitCode(1)
            }
            try location.withStore { store, _ in
                let kv = try store.alias(alias).keyValue()
                kv[key] = parsed
                try kv.save()
            }
        }
    }

    struct KVGet: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "get", abstract: "Print the value under KEY as JSON.")
        @OptionGroup var location: URLOption
        @Option(help: "The store alias.") var alias: String = Store.defaultAlias
        @Argument(help: "The key.") var key: String

        func run() throws {
            try location.withStore { store, _ in
                guard let value = try store.alias(alias).keyValue().value(forKey: key, as: DocumentValue.self) else {
                    printError("error: key '\(key)' not found")
                    throw ExitCode(1)
                }
                print(try value.jsonString(sortedKeys: true))
            }
        }
    }
}
#endif
