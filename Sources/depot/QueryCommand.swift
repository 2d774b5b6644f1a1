import ArgumentParser
import Depot
import DepotLMDB
import Foundation

struct QueryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Print the documents of a collection that match conditions, as JSON Lines (like export).",
        discussion: """
            --where takes three words: FIELD OP VALUE, with OP one of == != < <= > >= prefix, or the \
            three as one quoted argument ('age >= 30'; the rest after OP is the value). FIELD is a \
            field path (address.zip). VALUE is read as JSON when it parses (42, 1.5, true, null, "text"), \
            a typed value as export writes it ({"$date": "2026-01-31T00:00:00Z"}, {"$uuid": "…"}), \
            else as text (a number no field can hold, as 1e400 or a 30-digit integer, is an error, never text \
            that silently matches nothing: quote it, '"1e400"', to compare text); an array field matches when one of its elements does (skills == Swift), and an \
            array or object VALUE is refused. Repeat --where to combine conditions (AND). Conditions on indexed fields use the index.
            Example: depot query --path ./data --collection Employee --where salary '>' 100 --sort name --limit 10
            """)

    @OptionGroup var location: StoreOption
    @Option(help: "The collection.") var collection: String
    @Option(help: "The store alias.") var alias: String = Store.defaultAlias
    @Option(name: .customLong("where"), help: ArgumentHelp("A condition: FIELD OP VALUE (three words).", valueName: "FIELD OP VALUE"))
    var conditions: [String] = []
    @Option(help: ArgumentHelp("Sort by a field; add :desc for descending (:asc is the default). Repeatable.", valueName: "FIELD[:asc|:desc]"))
    var sort: [String] = []
    @Option(help: "At most this many documents.") var limit: Int?
    @Flag(help: "Print how the query ran (index or scan, rows examined) on standard error.") var explain = false
    @Flag(help: "Write dates, UUIDs and bytes as plain strings (as 'depot export --plain' does).") var plain = false
    @OptionGroup var output: OutputOptions

    static let separator: Character = "\u{1F}"

    func validate() throws {
        if let limit, limit < 0 { throw ValidationError("--limit must be 0 or more, got \(limit)") }
        if collection.isEmpty { throw ValidationError("--collection must not be empty") }
        if alias.isEmpty { throw ValidationError("--alias must not be empty") }
        // Names no store can hold are usage errors, as in `doc` (not "no collection named …").
        do { try Store.validateAliasName(alias) } catch { throw ValidationError("--alias: \(error)") }
        do { try Store.validateCollectionName(collection) } catch { throw ValidationError("--collection: \(error)") }
        _ = try parsedConditions()
        _ = try parsedSorts()
    }

    /// `FIELD`, `FIELD:asc` or `FIELD:desc`; any other text after the last ':' is a mistake.
    func parsedSorts() throws -> [FieldSort] {
        try sort.map { key -> FieldSort in
            var field = key, descending = false
            if let colon = key.lastIndex(of: ":") {
                let direction = key[key.index(after: colon)...]
                guard direction == "asc" || direction == "desc" else {
                    throw ValidationError("--sort '\(key)': the direction after ':' must be asc or desc")
                }
                field = String(key[..<colon])
                descending = direction == "desc"
            }
            if field.isEmpty { throw ValidationError("--sort '\(key)' names no field") }
            return FieldSort(field: field, descending: descending)
        }
    }

    func parsedConditions() throws -> [FieldCondition] {
        try conditions.map { raw in
            var parts = raw.split(separator: Self.separator, omittingEmptySubsequences: false).map(String.init)
            if parts.count == 1 {
                // One argument with spaces whose second word is no operator: say so, below.
                let words = raw.split(separator: " ", maxSplits: 2).map(String.init)
                if words.count == 3 { parts = words }
            }
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
        try reportingErrors {
            try location.withStore(.read) { store in try query(store) }
        }
    }

    private func query(_ store: Store) throws {
        let view = try StoreOption.existingAlias(alias, of: store)
        let sorts = try parsedSorts()
        let conditions = try parsedConditions()
        try view.read { tx in
            guard try tx.collections().contains(collection) else {
                throw CLIFailure(code: "noCollection", message: "no collection named '\(collection)' in alias '\(alias)'")
            }
            let (documents, plan) = try tx.query(collection: collection, conditions: conditions, sort: sorts, limit: limit)
            var out = ""
            for document in documents { out += try document.jsonLine(style: plain ? .plain : .extended) + "\n" }
            try StandardOutput.write(out)
            if explain {
                if output.json {
                    StandardError.write(try JSONOutput.line(["plan": "\(plan)"]) + "\n")
                } else {
                    printError("plan: \(plan)")
                }
            }
            if documents.isEmpty || !sorts.isEmpty {
                let fields = conditions.map(\.field) + sorts.map(\.field)
                try warnAboutMissingFields(fields, in: tx)
            }
        }
    }

    /// Warns on standard error about each field that no document among the first 1,000 of the
    /// collection has (a typo returns nothing, or sorts nothing, without a hint otherwise).
    func warnAboutMissingFields(_ fields: [String], in tx: DocumentTransaction) throws {
        // Each path parsed once, not once per document.
        var missing = Dictionary(fields.map { ($0, IndexFieldPath($0)) }, uniquingKeysWith: { first, _ in first })
        var seen = Set<String>()
        var examined = 0
        try tx.export(collection: collection) { exported in
            examined += 1
            for (field, path) in missing where path.value(in: exported.document) != nil { missing[field] = nil }
            for field in exported.document.fields ?? [] { seen.insert(field.key) }
            return !missing.isEmpty && examined < 1_000
        }
        for field in fields where missing[field] != nil {
            var message = "no \(collection) document has a field '\(field)'"
            message += examined >= 1_000 ? " (looked at the first 1,000 documents)" : " (looked at all \(examined) documents)"
            if let near = CommandSuggestions.closest(to: field, in: seen.sorted()) { message += "; did you mean '\(near)'?" }
            OutputConvention.printWarning(message)
            missing[field] = nil
        }
    }
}

extension DepotCommand {
    /// Joins the three words after each `--where` into one value, so that values such as `-5`
    /// are not taken for options. A condition quoted as one argument (`--where 'age >= 30'`)
    /// is split at its first two runs of spaces when its second word is an operator; the rest,
    /// spaces and all, is the value. Only `query` has `--where`; nothing after `--` is touched
    /// (a key or value there is the user's bytes, whatever it looks like).
    static func preprocess(_ arguments: [String]) -> [String] {
        var out: [String] = []
        let conditions = arguments.first { !$0.hasPrefix("-") } == "query"
        var i = 0
        while i < arguments.count {
            let arg = arguments[i]
            if arg == "--" {
                out += arguments[i...]
                break
            }
            if conditions, arg == "--where", i + 1 < arguments.count, arguments[i + 1].contains(" ") {
                // One argument: split here, or left whole for `parsedConditions` to name what
                // is wrong (never taking the arguments after it as its words).
                out.append(arg)
                out.append(quotedCondition(arguments[i + 1])?.joined(separator: String(QueryCommand.separator)) ?? arguments[i + 1])
                i += 2
                continue
            }
            if numericOptions.contains(arg), i + 1 < arguments.count, isNegativeNumber(arguments[i + 1]) {
                // `--limit -1`: argument-parser takes "-1" for an option and says "Missing value";
                // joined, the command's own check names the range.
                out.append(arg + "=" + arguments[i + 1])
                i += 2
                continue
            }
            if conditions, arg == "--where", i + 3 < arguments.count {
                out.append(arg)
                out.append(arguments[(i + 1)...(i + 3)].joined(separator: String(QueryCommand.separator)))
                i += 4
                continue
            }
            out.append(arg)
            i += 1
        }
        return out
    }

    /// The options that take a number (a negative one is joined to its option by `preprocess`).
    static let numericOptions: Set<String> = [
        "--limit", "--batch", "--count", "--value-size", "--map-size", "--max-problems",
        "--records", "--payload-size", "--start", "--seconds", "--retries", "--async-writers",
        "--key-id", "--max-line-size",
    ]

    /// Whether `text` is a negative number (`-1`, `-0.5`).
    static func isNegativeNumber(_ text: String) -> Bool {
        text.count > 1 && text.hasPrefix("-") && Double(text) != nil
    }

    /// FIELD, OP and VALUE of a condition written as one argument, or nil when `text` is not
    /// one (no spaces, or a second word that is not an operator).
    static func quotedCondition(_ text: String) -> [String]? {
        let words = text.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
        guard words.count == 3, FieldCondition.Operator(rawValue: String(words[1])) != nil else { return nil }
        let value = words[2].drop(while: { $0 == " " })
        return [String(words[0]), String(words[1]), String(value)]
    }
}
