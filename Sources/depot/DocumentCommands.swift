import ArgumentParser
import Depot
import DepotLMDB
import Foundation

struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Print stored documents as JSON Lines: {\"collection\": C, \"id\": ID, \"document\": {…}}.",
        discussion: """
            References to other documents are written as {"$ref": {"collection": C2, "id": ID2}}; dates, \
            UUIDs and bytes as {"$date": "2026-01-31T12:00:00Z"}, {"$uuid": "…"} and \
            {"$binary": {"base64": "…", "subType": "00"}} (MongoDB Extended JSON), which import reads back as \
            the same typed values (indexes and queries see dates, not text); --plain writes them as strings. \
            A line names its document's sync status where it is not notSynced (what import stores by default): \
            "syncStatus": "synced". \
            Where an ID's JSON would be read back as another ID kind than its collection's (unsigned IDs that \
            fit a signed integer, string IDs spelled like UUIDs), the line names the kind: "idKind": "unsigned". \
            'depot import' reads this format back. A store holding no documents prints nothing; an \
            alias that is not in a store holding others is an error. On a terminal, standard error \
            shows progress.
            """)

    @OptionGroup var location: StoreOption
    @Option(help: "The store alias.") var alias: String = Store.defaultAlias
    @Option(help: "Only this collection.") var collection: String?
    @Option(help: "Write dates as iso8601, seconds, milliseconds, reference (seconds since 2001), or format:PATTERN (e.g. format:yyyy-MM-dd) instead of {\"$date\": …}. Import stores them as the strings or numbers written (typed reads decode iso8601 and reference).")
    var dates: DateOption?
    @Flag(help: "Write dates, UUIDs and bytes as plain strings (ISO-8601, text, base64), as tools that do not read {\"$date\": …} expect; imported back, they are strings.")
    var plain = false
    @OptionGroup var output: OutputOptions
    @Flag(name: .customLong("skip-damaged"),
          help: "Export every sound document and report each damaged one (collection and ID) on standard error; exit status 1 if any was damaged.")
    var skipDamaged = false

    func validate() throws {
        if alias.isEmpty { throw ValidationError("--alias must not be empty") }
        if let collection, collection.isEmpty { throw ValidationError("--collection must not be empty") }
        // Names no store can hold are usage errors, as in `doc` (not "no collection named …").
        do { try Store.validateAliasName(alias) } catch { throw ValidationError("--alias: \(error)") }
        if let collection {
            do { try Store.validateCollectionName(collection) } catch { throw ValidationError("--collection: \(error)") }
        }
    }

    func run() throws {
        try reportingErrors {
            try location.withStore(.read) { store in try export(store) }
        }
    }

    private func export(_ store: Store) throws {
        let aliases = try store.aliases()
        // A store without documents (new, or filled by an empty import) exports as nothing.
        if aliases.isEmpty { return }
        guard aliases.contains(alias) else {
            throw CLIFailure(code: "noAlias", message: "no alias named '\(alias)' in '\(store.path)' (aliases: \(aliases.joined(separator: ", ")))")
        }
        let view = try store.alias(alias)
        try view.read { tx in
            if let collection, !(try tx.collections().contains(collection)) {
                throw CLIFailure(code: "noCollection", message: "no collection named '\(collection)' in alias '\(alias)'")
            }
            let names = try collection.map { [$0] } ?? tx.collections()
            let total = try names.reduce(0) { $0 + (try tx.collectionInfo($1)?.count ?? 0) }
            let progress = ProgressLine("export", unit: "documents", totalItems: total)
            var out = ""
            var documents = 0
            var bytes = 0
            var damaged = 0
            let report: ((DepotError) -> Void)? = skipDamaged ? { error in
                damaged += 1
                printError("damaged: \(error.collection ?? "?")/\(error.id ?? "?") (\(error.code)): skipped")
            } : nil
            try tx.export(collection: collection, damaged: report) { document in
                out += try document.jsonLine(style: plain ? .plain : .extended, dateStrategy: dates?.strategy)
                out += "\n"
                documents += 1
                if out.utf8.count > 1 << 16 {
                    bytes += out.utf8.count
                    try StandardOutput.write(out)
                    out = ""
                    progress.update(items: documents, bytes: bytes)
                }
                return true
            }
            try StandardOutput.write(out)
            progress.finish()
            if damaged > 0 {
                printError("error: \(damaged) damaged document\(damaged == 1 ? " was" : "s were") not exported; \(documents) exported")
                throw ExitCode(1)
            }
        }
    }
}

/// `--dates` of the commands that write JSON.
struct DateOption: ExpressibleByArgument {
    let strategy: DateStrategy

    /// The option's text, as typed.
    let text: String

    init(_ strategy: DateStrategy) {
        self.strategy = strategy
        switch strategy {
        case .iso8601: text = "iso8601"
        case .secondsSince1970: text = "seconds"
        case .millisecondsSince1970: text = "milliseconds"
        case .secondsSinceReferenceDate: text = "reference"
        case .formatted(let pattern): text = "format:" + pattern
        }
    }

    init?(argument: String) {
        text = argument
        switch argument {
        case "iso8601": strategy = .iso8601
        case "seconds": strategy = .secondsSince1970
        case "milliseconds": strategy = .millisecondsSince1970
        case "reference": strategy = .secondsSinceReferenceDate
        default:
            guard argument.hasPrefix("format:"), argument.count > 7 else { return nil }
            strategy = .formatted(String(argument.dropFirst(7)))
        }
    }

    static var allValueStrings: [String] { ["iso8601", "seconds", "milliseconds", "reference", "format:PATTERN"] }

    /// `iso8601` in help, not the value's debug description.
    var defaultValueDescription: String { text }
}
