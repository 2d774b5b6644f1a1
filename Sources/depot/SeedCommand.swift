import ArgumentParser
import Depot
import Foundation

struct SeedCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "seed",
        abstract: "Import a JSON seed tree (DLData format) into a store, in one transaction.",
        discussion: """
            On a terminal, a progress line shows the files and instances read so far (the tree's \
            size is unknown until every link is followed, so there is no bar); nothing extra is \
            printed when standard error is not a terminal. The summary counts stored documents (an \
            object found in several files counts once). Links must stay inside the seed file's \
            folder; seedUrl links are refused unless their host is allowed. Into a folder that holds \
            no store, the tree is checked before the store is created, so a tree that cannot be \
            imported leaves nothing there.
            """)

    @OptionGroup var location: PathOption
    @Option(help: "The store alias.") var alias: String = Store.defaultAlias
    @Option(name: .customLong("allow-remote"), help: "Allow seedUrl links to this host (repeatable).") var allowRemote: [String] = []
    @OptionGroup var output: OutputOptions
    @Argument(help: "The root seed file.") var file: String

    func run() throws {
        try reportingErrors {
            var options = SeedOptions()
            options.allowedRemoteHosts = Set(allowRemote)
            let url = URL(fileURLWithPath: file)
            func failed(_ error: SeedError) throws -> Never {
                throw CLIFailure(code: error.kind.rawValue, message: "\(error); nothing was stored (the import is one transaction)")
            }
            // A new store is created only for a tree that can be imported: a failed seed into a
            // new folder leaves nothing there (the folders it would have created are removed).
            let location = NewStoreLocation(self.location.path)
            if location.missingFolders != nil {
                do {
                    try Store.checkSeedTree(at: url, options: options)
                } catch let error as SeedError {
                    location.removeCreatedFolders()
                    try failed(error)
                }
            }
            let store = try Store(path: self.location.path).alias(alias)
            let progress = ProgressLine("seed: reading", unit: "instances")
            options.progress = { p in
                progress.update(items: p.documentsFound, note: "\(p.filesRead) files  \(p.currentFile)")
            }
            let summary: SeedSummary
            do {
                summary = try store.seed(from: url, options: options)
            } catch let error as SeedError {
                progress.finish()
                try failed(error)
            }
            progress.finish()
            if output.json {
                print(try JSONOutput.line(summary))
            } else {
                print("seeded \(summary.totalDocuments) documents from \(summary.filesRead) files (\(summary.bytesRead) bytes) in \(String(format: "%.3f", summary.seconds)) s; \(summary.generatedIDs) IDs generated")
                for (collection, count) in summary.documentsPerCollection.sorted(by: { $0.key < $1.key }) {
                    print("  \(collection): \(count)")
                }
            }
        }
    }
}
