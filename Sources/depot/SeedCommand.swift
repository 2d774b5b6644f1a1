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

    @OptionGroup var location: StoreOption
    @Option(help: "The store alias.") var alias: String = Store.defaultAlias
    @Option(name: .customLong("allow-remote"), help: "Allow seedUrl links to this host (repeatable).") var allowRemote: [String] = []
    @OptionGroup var output: OutputOptions
    @Argument(help: "The root seed file.") var file: String

    func run() throws {
        try reportingErrors {
            var options = SeedOptions()
            options.allowedRemoteHosts = Set(allowRemote)
            let url = URL(fileURLWithPath: file)
            // A new store is created only for a tree that can be imported: a failed seed into a
            // new folder leaves nothing there (the folders it would have created are removed).
            let location = try self.location.location
            let folder: NewStoreLocation? = if case .folder(let path) = location { NewStoreLocation(path) } else { nil }
            if let folder, folder.missingFolders != nil {
                do {
                    try Store.checkSeedTree(at: url, options: options)
                } catch let error as DepotError where error.code == .seedFailed {
                    folder.removeCreatedFolders()
                    throw Self.failed(error)
                }
            }
            try self.location.withStore(.create) { store in try seed(store.alias(alias), from: url, options: options) }
        }
    }

    /// The failure reported for a seed tree that cannot be imported.
    static func failed(_ error: DepotError) -> CLIFailure {
        CLIFailure(code: error.seedProblem?.rawValue ?? error.code.rawValue, message: "\(error); nothing was stored (the import is one transaction)",
                   file: error.file, jsonPath: error.fieldPath)
    }

    private func seed(_ store: Store, from url: URL, options: SeedOptions) throws {
        var options = options
        let progress = ProgressLine("seed: reading", unit: "instances")
        options.progress = { p in
            progress.update(items: p.documentsFound, note: "\(p.filesRead) files  \(p.currentFile)")
        }
        let summary: SeedSummary
        do {
            summary = try store.seed(from: url, options: options)
        } catch let error as DepotError where error.code == .seedFailed {
            progress.finish()
            throw Self.failed(error)
        }
        StandardOutput.noteCommitted("the seeded documents were stored")
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
