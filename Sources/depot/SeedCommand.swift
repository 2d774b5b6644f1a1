import ArgumentParser
import Depot
import Foundation

#if canImport(Glibc)
import Glibc
#endif

struct SeedCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "seed",
        abstract: "Import a JSON seed tree (DLData format) into a store, in one transaction.",
        discussion: "Shows a progress bar on a terminal, plain lines otherwise, then a summary. Links must stay inside the seed file's folder; seedUrl links are refused unless their host is allowed.")

    @OptionGroup var location: PathOption
    @Option(help: "The store alias.") var alias: String = Store.defaultAlias
    @Option(name: .customLong("allow-remote"), help: "Allow seedUrl links to this host (repeatable).") var allowRemote: [String] = []
    @Flag(help: "Print the summary as JSON.") var json = false
    @Argument(help: "The root seed file.") var file: String

    func run() throws {
        try reportingErrors {
            let store = try Store(path: location.path).alias(alias)
            var options = SeedOptions()
            options.allowedRemoteHosts = Set(allowRemote)
            let terminal = isatty(2) == 1
            options.progress = { p in
                let line = "files \(p.filesRead)  documents \(p.documentsFound)  \(p.currentFile)"
                if terminal {
                    let bar = String(repeating: "█", count: min(30, p.filesRead % 31)).padding(toLength: 30, withPad: "·", startingAt: 0)
                    FileHandle.standardError.write(Data(("\r\u{1B}[K[\(bar)] " + line).utf8))
                } else {
                    FileHandle.standardError.write(Data((line + "\n").utf8))
                }
            }
            let summary: SeedSummary
            do {
                summary = try store.seed(from: URL(fileURLWithPath: file), options: options)
            } catch let error as SeedError {
                if terminal { FileHandle.standardError.write(Data("\n".utf8)) }
                printError("error: \(error)")
                printError("nothing was stored (the import is one transaction)")
                throw ExitCode(1)
            }
            if terminal { FileHandle.standardError.write(Data("\n".utf8)) }
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                print(String(decoding: try encoder.encode(summary), as: UTF8.self))
            } else {
                print("seeded \(summary.totalDocuments) documents from \(summary.filesRead) files (\(summary.bytesRead) bytes) in \(String(format: "%.3f", summary.seconds)) s; \(summary.generatedIDs) IDs generated")
                for (collection, count) in summary.documentsPerCollection.sorted(by: { $0.key < $1.key }) {
                    print("  \(collection): \(count)")
                }
            }
        }
    }
}
