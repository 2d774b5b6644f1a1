#if Postgres
import ArgumentParser
import Depot
import Foundation

struct SeedCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "seed",
        abstract: "Import a JSON seed tree (DLData format) into the store, in one transaction.")

    @OptionGroup var location: URLOption
    @Option(help: "The store alias.") var alias: String = Store.defaultAlias
    @Option(name: .customLong("allow-remote"), help: "Allow seedUrl links to this host (repeatable).") var allowRemote: [String] = []
    @Flag(help: "Print the summary as JSON.") var json = false
    @Argument(help: "The root seed file.") var file: String

    func run() throws {
        try location.withStore { store, _ in
            var options = SeedOptions()
            options.allowedRemoteHosts = Set(allowRemote)
            let summary = try store.alias(alias).seed(from: URL(fileURLWithPath: file), options: options)
            if json {
                print(try jsonLine(summary))
            } else {
                print("seeded \(summary.totalDocuments) documents from \(summary.filesRead) files (\(summary.bytesRead) bytes) in \(String(format: "%.3f", summary.seconds)) s; \(summary.generatedIDs) IDs generated")
                for (collection, count) in summary.documentsPerCollection.sorted(by: { $0.key < $1.key }) {
                    print("  \(collection): \(count)")
                }
            }
        }
    }
}

struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Print stored documents as JSON Lines: {\"collection\": C, \"id\": ID, \"document\": {…}} (as depot export).")

    @OptionGroup var location: URLOption
    @Option(help: "The store alias.") var alias: String = Store.defaultAlias
    @Option(help: "Only this collection.") var collection: String?

    func run() throws {
        try location.withStore { store, driver in
            let view = try existingAlias(store, alias, at: driver.location)
            try view.read { tx in
                if let collection, !(try tx.collections().contains(collection)) {
                    printError("error: no collection named '\(collection)' in alias '\(alias)'")
                    throw ExitCode(1)
                }
                var out = ""
                try tx.export(collection: collection) { document in
                    out += try document.jsonLine() + "\n"
                    if out.utf8.count > 1 << 16 {
                        FileHandle.standardOutput.write(Data(out.utf8))
                        out = ""
                    }
                    return true
                }
                FileHandle.standardOutput.write(Data(out.utf8))
            }
        }
    }
}

struct CollectionsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "collections",
        abstract: "List the aliases of the store, their collections, document counts, ID kinds and indexes.")

    @OptionGroup var location: URLOption
    @Option(help: "Only this alias.") var alias: String?
    @Flag(help: "Print JSON Lines: one object per collection.") var json = false

    /// One line of `--json` (as `depot collections --json`).
    struct Line: Encodable {
        var alias: String
        var collection: String
        var count: Int
        var idKind: String
        var indexes: [CollectionInfo.Index]
    }

    func run() throws {
        try location.withStore { store, driver in
            let aliases = try store.aliases()
            if let alias, !aliases.contains(alias) {
                printError("error: no alias named '\(alias)' in \(driver.location)")
                throw ExitCode(1)
            }
            var lines: [String] = []
            for name in aliases where alias == nil || alias == name {
                let infos = try store.alias(name).read { tx in try tx.collections().compactMap { try tx.collectionInfo($0) } }
                if json {
                    for info in infos {
                        lines.append(try jsonLine(Line(alias: name, collection: info.name, count: info.count, idKind: info.idKind.rawValue, indexes: info.indexes)))
                    }
                    continue
                }
                lines.append("alias '\(name)': \(infos.count) collection\(infos.count == 1 ? "" : "s")")
                for info in infos {
                    var line = "  \(info.name)  \(info.count) document\(info.count == 1 ? "" : "s"), \(info.idKind.rawValue) IDs"
                    if !info.indexes.isEmpty {
                        line += "; indexes: " + info.indexes.map { "\($0.name) (\($0.field)\($0.unique ? ", unique" : ""))" }.joined(separator: ", ")
                    }
                    lines.append(line)
                }
            }
            if lines.isEmpty && !json { lines.append("no documents in \(driver.location)") }
            if !lines.isEmpty { print(lines.joined(separator: "\n")) }
        }
    }
}

struct StatCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stat",
        abstract: "Show where the store is and how many aliases, collections and documents it holds.")

    @OptionGroup var location: URLOption
    @Flag(help: "Print one JSON object.") var json = false

    /// What `--json` prints.
    struct Summary: Encodable {
        var location: String
        var aliases: Int
        var collections: Int
        var documents: Int
    }

    func run() throws {
        try location.withStore { store, driver in
            var summary = Summary(location: driver.location, aliases: 0, collections: 0, documents: 0)
            for name in try store.aliases() {
                summary.aliases += 1
                let counts = try store.alias(name).read { tx in try tx.collections().compactMap { try tx.collectionInfo($0)?.count } }
                summary.collections += counts.count
                summary.documents += counts.reduce(0, +)
            }
            if json {
                print(try jsonLine(summary))
            } else {
                print("store:       \(summary.location)\naliases:     \(summary.aliases)\ncollections: \(summary.collections)\ndocuments:   \(summary.documents)")
            }
        }
    }
}
#endif
