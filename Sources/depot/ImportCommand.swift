import ArgumentParser
import Depot
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Store documents from JSON Lines as 'depot export' writes them.",
        discussion: """
            Each line is {"collection": C, "id": ID, "document": {…}}, with no other key; references are \
            {"$ref": {"collection": C2, "id": ID2}}; {"$date": "2026-01-31T12:00:00Z"}, {"$uuid": "…"}, \
            {"$binary": {"base64": "…", "subType": "00"}} and {"$numberDouble": "NaN"} are stored as the typed \
            values they stand for (a malformed one is an error naming its JSON path), and {"$literal": {…}} as \
            its object as it is (--plain reads them all as plain objects). Documents are stored under their collection \
            and ID exactly as given (replacing a stored one with the same ID: a line repeating an earlier \
            line's collection and ID replaces its document, and the summary counts documents stored \
            and names the replacing lines); indexes are kept. \
            The whole input is read and checked first, then stored in one transaction: on any \
            error nothing is stored and the message names the line. With --batch N, every N \
            documents are committed as they are read instead (for inputs too large to hold in \
            memory; an error then keeps the batches already committed). A new collection takes \
            its ID kind from all of its IDs (those of the first batch, with --batch): integers are signed, \
            unsigned when one is past the largest signed 64-bit integer; strings are UUIDs when every one is a \
            Foundation-style upper-case UUID, else strings; integer and string IDs in one collection are refused \
            before anything is stored. A line may name its collection's ID kind, {"idKind": "unsigned"} \
            (string, signed, unsigned, uuid or content), as export does where the IDs alone would mislead; \
            a collection the store has keeps its own kind, and a line naming another is refused. A line may name its \
            document's sync status, {"syncStatus": "synced"} (notSynced, synced, syncing or undetermined), as export \
            does where it is not notSynced, what a line naming none stores. Export, import into an empty store and \
            export again print the same lines: the collections keep their ID kinds, the documents their typed values and sync status.
            """)

    @OptionGroup var location: StoreOption
    @Option(help: "The store alias to import into.") var alias: String = Store.defaultAlias
    @Option(help: "Commit every N documents instead of all at once (0: all at once).") var batch: Int = 0
    @Option(help: ArgumentHelp("Refuse a line longer than this many bytes (a line is held in memory whole; at most 1 GiB).", valueName: "bytes"))
    var maxLineSize: Int = GeneratorLimits.maxValueSize
    @Flag(help: "Read objects such as {\"$date\": …} as plain objects, not as typed values (input from other tools whose documents hold such keys).")
    var plain = false
    @OptionGroup var output: OutputOptions
    @Argument(help: ArgumentHelp("The JSON Lines file (or a pipe); '-' or nothing reads standard input (nothing: only when it is not a terminal).", valueName: "file"))
    var fileArgument: String?

    /// The input as named: the file, or `-` for standard input.
    var file: String { fileArgument ?? "-" }

    func validate() throws {
        guard batch >= 0 else { throw ValidationError("--batch must be 0 or more, got \(batch)") }
        guard (1...GeneratorLimits.maxValueSize).contains(maxLineSize) else {
            throw ValidationError("--max-line-size must be 1 to \(GeneratorLimits.maxValueSize) bytes, got \(maxLineSize)")
        }
        do { try Store.validateAliasName(alias) } catch { throw ValidationError("--alias: \(error)") }
        if fileArgument == nil && isatty(STDIN_FILENO) == 1 {
            throw ValidationError("give the JSON Lines file to import, or pipe it in: depot import FILE, or … | depot import -")
        }
    }

    func run() throws {
        try reportingErrors {
            let (input, totalBytes) = try ImportInput.open(file)
            if input == STDIN_FILENO && isatty(STDIN_FILENO) == 1 {
                printError("reading JSON Lines from the terminal; end with Ctrl-D")
            }
            defer { if input != STDIN_FILENO { _ = close(input) } }
            let started = Date()
            // The store is opened when the first documents are written: an error before leaves
            // no trace (folders the import would have created are removed again).
            let folder: NewStoreLocation? = if case .folder(let path) = try location.location { NewStoreLocation(path) } else { nil }
            var opened: Store?
            var close: () -> Void = {}
            defer { close() }
            func store() throws -> Store {
                if let opened { return opened }
                let (base, closing) = try location.openStore(.create)
                close = closing
                let store = try base.alias(alias)
                opened = store
                return store
            }
            let progress = ProgressLine("import", unit: "documents", totalBytes: totalBytes)
            let reader = LineReader(input, longestLine: maxLineSize)
            var stored = StoredIDs()
            var pending: [ImportedLine] = []
            func flush() throws {
                guard !pending.isEmpty else { return }
                let documents = pending
                // Before the store is opened: IDs of two families in one collection store nothing.
                let newKinds = try ImportedIDKinds(documents)
                let store = try store()
                let batch: StoredIDs.Batch
                do {
                    batch = try store.write { tx in
                        var batch = StoredIDs.Batch()
                        var kinds: [String: IDKind] = [:]
                        for document in documents {
                            if kinds[document.collection] == nil { kinds[document.collection] = try tx.collectionInfo(document.collection)?.idKind }
                            // A collection the store has keeps its kind; a new one gets the input's.
                            if let declared = document.declaredKind, let existing = kinds[document.collection], declared != existing {
                                throw ImportError(.rejectedDocument, line: document.line, jsonPath: "$.idKind",
                                                  detail: "collection '\(document.collection)' has \(existing.rawValue) IDs in the store, and the line names \(declared.rawValue) IDs")
                            }
                            let kind = kinds[document.collection] ?? newKinds[document.collection]
                            try document.checkUUIDSpelling(kind: kind ?? .string)
                            do {
                                try tx.put(document: document.document, in: document.collection, id: document.id, idKind: kind,
                                           syncStatus: document.syncStatus)
                                if kinds[document.collection] == nil { kinds[document.collection] = try tx.collectionInfo(document.collection)?.idKind }
                                if let kind = kinds[document.collection], let key = kind.key(for: document.id) {
                                    batch.add(collection: document.collection, key: key, line: document.line, to: stored)
                                }
                            } catch {
                                throw ImportError(.rejectedDocument, line: document.line, detail: userMessage(for: error), underlying: error)
                            }
                        }
                        return batch
                    }
                } catch let error as ImportError {
                    throw error
                } catch {
                    let lines = documents.count == 1 ? "line \(documents[0].line)" : "lines \(documents[0].line)–\(documents[documents.count - 1].line)"
                    throw ImportError(.storeFailed, detail: "storing \(lines) failed: \(userMessage(for: error))", underlying: error)
                }
                stored.merge(batch)
                StandardOutput.noteCommitted("\(stored.count) document\(stored.count == 1 ? " was" : "s were") stored")
                pending.removeAll(keepingCapacity: true)
            }
            do {
                while let line = try reader.next() {
                    if line.isBlank { continue }
                    pending.append(try ImportedLine(parsing: line, style: plain ? .plain : .extended))
                    progress.update(items: stored.count + pending.count, bytes: reader.bytesRead)
                    if batch > 0 && pending.count >= batch { try flush() }
                }
                try flush()
                _ = try store() // an empty input makes an empty store
            } catch {
                progress.finish()
                if opened == nil { folder?.removeCreatedFolders() }
                var failure = error as? ImportError ?? ImportError(.storeFailed, detail: userMessage(for: error), underlying: error)
                failure.file = file
                failure.outcome = stored.count == 0 ? "nothing was stored" : "\(stored.count) documents of earlier batches stay stored"
                throw failure
            }
            progress.finish()
            let seconds = Date().timeIntervalSince(started)
            let summary = ImportSummary(alias: alias, documents: stored.count, documentsPerCollection: stored.perCollection,
                                        replacedLines: stored.replacedLines, replacedLineNumbers: stored.firstReplacedLines, seconds: seconds)
            if output.json {
                print(try JSONOutput.line(summary))
            } else {
                print(summary.text)
            }
        }
    }
}

/// `depot import --json` output.
struct ImportSummary: Encodable {
    var alias: String
    /// Documents stored: a line whose collection and ID an earlier line of the import had
    /// replaces that line's document and is not counted again.
    var documents: Int
    var documentsPerCollection: [String: Int]
    /// How many lines replaced the document of an earlier line (same collection and ID).
    var replacedLines: Int
    /// The first few of them (``StoredIDs/listedLines``).
    var replacedLineNumbers: [Int]
    var seconds: Double

    /// The summary for people.
    var text: String {
        var lines = ["imported \(documents) \(documents == 1 ? "document" : "documents") into alias '\(alias)' in \(String(format: "%.3f", seconds)) s"]
        for (collection, count) in documentsPerCollection.sorted(by: { $0.key < $1.key }) { lines.append("  \(collection): \(count)") }
        if replacedLines > 0 {
            let listed = replacedLineNumbers.map(String.init).joined(separator: ", ") + (replacedLines > replacedLineNumbers.count ? ", …" : "")
            lines.append("\(replacedLines) \(replacedLines == 1 ? "line" : "lines") replaced a document of an earlier line with the same collection and ID "
                         + "(the last one is stored): \(replacedLines == 1 ? "line" : "lines") \(listed)")
        }
        return lines.joined(separator: "\n")
    }
}

/// The documents an import stored, by collection and stored key (as the collection's ID kind
/// writes it, so two spellings of one ID are one document).
///
/// Keys are kept as 128-bit fingerprints (16 bytes a document, however long the key: an import
/// of many millions of documents with `--batch` must not hold every key). Two different keys
/// share a fingerprint with a chance of about n² / 2¹²⁹ — for a billion documents, 10⁻²¹.
struct StoredIDs {
    /// How many replacing lines are listed by number.
    static let listedLines = 10

    struct Fingerprint: Hashable {
        let high: UInt64, low: UInt64

        init(_ key: [UInt8]) {
            var first = Hasher(), second = Hasher()
            first.combine(0x5EED_0001 as UInt64)
            second.combine(0x5EED_0002 as UInt64)
            key.withUnsafeBytes { first.combine(bytes: $0); second.combine(bytes: $0) }
            high = UInt64(bitPattern: Int64(first.finalize()))
            low = UInt64(bitPattern: Int64(second.finalize()))
        }
    }

    private var keys: [String: Set<Fingerprint>] = [:]
    private(set) var count = 0
    private(set) var replacedLines = 0
    private(set) var firstReplacedLines: [Int] = []

    var perCollection: [String: Int] { keys.mapValues(\.count) }

    /// What one write transaction adds (kept apart until it commits).
    struct Batch {
        fileprivate var added: [String: Set<Fingerprint>] = [:]
        fileprivate var replaced = 0
        fileprivate var firstReplaced: [Int] = []

        mutating func add(collection: String, key: [UInt8], line: Int, to stored: StoredIDs) {
            let fingerprint = Fingerprint(key)
            if stored.keys[collection]?.contains(fingerprint) == true || !added[collection, default: []].insert(fingerprint).inserted {
                replaced += 1
                if firstReplaced.count < StoredIDs.listedLines { firstReplaced.append(line) }
            }
        }
    }

    mutating func merge(_ batch: Batch) {
        for (collection, added) in batch.added {
            keys[collection, default: []].formUnion(added)
            count += added.count
        }
        replacedLines += batch.replaced
        firstReplacedLines += batch.firstReplaced.prefix(Self.listedLines - firstReplacedLines.count)
    }
}
