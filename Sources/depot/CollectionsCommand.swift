import ArgumentParser
import Depot
import Foundation

struct CollectionsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "collections",
        abstract: "List the aliases of a store, their collections, document counts, ID kinds and indexes.")

    @OptionGroup var location: StoreOption
    @Option(help: "Only this alias.") var alias: String?
    @OptionGroup var output: OutputOptions

    func validate() throws {
        if let alias, alias.isEmpty { throw ValidationError("--alias must not be empty") }
    }

    func run() throws {
        try reportingErrors {
            try location.withStore(.read) { store in try list(store) }
        }
    }

    private func list(_ store: Store) throws {
        let aliases = try store.aliases()
        if let alias, !aliases.contains(alias) {
            throw CLIFailure(code: "noAlias", message: "no alias named '\(alias)' in '\(store.path)' (aliases: \(aliases.isEmpty ? "none" : aliases.joined(separator: ", ")))")
        }
        var lines: [String] = []
        for name in aliases where alias == nil || alias == name {
            let infos = try store.alias(name).read { tx in try tx.collections().compactMap { try tx.collectionInfo($0) } }
            if output.json {
                for info in infos { lines.append(try JSONOutput.line(CollectionLine(alias: name, info: info))) }
                continue
            }
            lines.append("alias '\(name)': \(infos.count) collection\(infos.count == 1 ? "" : "s")")
            let width = infos.map(\.name.count).max() ?? 0
            for info in infos {
                // Padded by characters (`padding(toLength:)` counts UTF-16 units: it cut an emoji in two).
                var line = "  " + info.name + String(repeating: " ", count: max(0, width - info.name.count))
                line += "  " + ProgressLine.count(info.count) + " document" + (info.count == 1 ? "" : "s")
                line += ", \(info.idKind.rawValue) IDs"
                if !info.indexes.isEmpty {
                    line += "; indexes: " + info.indexes.map { "\($0.name) (\($0.field)\($0.unique ? ", unique" : ""))" }.joined(separator: ", ")
                }
                lines.append(line)
            }
        }
        if lines.isEmpty && !output.json { lines.append("no documents in '\(store.path)'") }
        if !lines.isEmpty { print(lines.joined(separator: "\n")) }
    }
}

/// One line of `depot collections --json`.
struct CollectionLine: Encodable {
    var alias: String
    var collection: String
    var count: Int
    var idKind: String
    var indexes: [CollectionInfo.Index]

    init(alias: String, info: CollectionInfo) {
        self.alias = alias
        collection = info.name
        count = info.count
        idKind = info.idKind.rawValue
        indexes = info.indexes
    }
}
