import ArgumentParser
import Depot
import Foundation

struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Store documents from JSON Lines as 'depot export' writes them.",
        discussion: """
            Each line is {"collection": C, "id": ID, "document": {…}}; references are \
            {"$ref": {"collection": C2, "id": ID2}}. Documents are stored under their collection \
            and ID exactly as given (replacing a stored one with the same ID); indexes are kept. \
            The whole input is read and checked first, then stored in one transaction: on any \
            error nothing is stored and the message names the line. With --batch N, every N \
            documents are committed as they are read instead (for inputs too large to hold in \
            memory; an error then keeps the batches already committed). A new collection takes \
            its ID kind from the first ID: integers are signed, Foundation-style upper-case UUID \
            strings are UUIDs, other strings are strings. Export, import into an empty store and \
            export again print the same lines.
            """)

    @OptionGroup var location: PathOption
    @Option(help: "The store alias to import into.") var alias: String = Store.defaultAlias
    @Option(help: "Commit every N documents instead of all at once (0: all at once).") var batch: Int = 0
    @Flag(help: "Print the summary as JSON.") var json = false
    @Argument(help: "The JSON Lines file; '-' or nothing reads standard input.") var file: String = "-"

    func validate() throws {
        guard batch >= 0 else { throw ValidationError("--batch must be 0 or more, got \(batch)") }
    }

    func run() throws {
        try reportingErrors(json: json) {
            let input: FileHandle
            var totalBytes: Int?
            if file == "-" {
                input = FileHandle.standardInput
            } else {
                guard let handle = FileHandle(forReadingAtPath: file) else {
                    printError("error: cannot read '\(file)' (no such file, or not readable)")
                    throw ExitCode(1)
                }
                input = handle
                totalBytes = (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? nil
            }
            let started = Date()
            let store = try Store(path: location.path).alias(alias)
            let progress = ProgressLine("import", unit: "documents", totalBytes: totalBytes)
            let reader = LineReader(input)
            var perCollection: [String: Int] = [:]
            var stored = 0
            var pending: [ImportedLine] = []
            let source = file == "-" ? "standard input" : "'\(file)'"
            func flush() throws {
                guard !pending.isEmpty else { return }
                let documents = pending
                try store.write { tx in
                    for document in documents {
                        do {
                            try tx.put(document: document.document, in: document.collection, id: document.id)
                        } catch {
                            throw ImportFailure(line: document.line, message: userMessage(for: error))
                        }
                    }
                }
                for document in documents { perCollection[document.collection, default: 0] += 1 }
                stored += documents.count
                pending.removeAll(keepingCapacity: true)
            }
            do {
                while let line = try reader.next() {
                    if line.isBlank { continue }
                    pending.append(try ImportedLine(parsing: line))
                    progress.update(items: stored + pending.count, bytes: reader.bytesRead)
                    if batch > 0 && pending.count >= batch { try flush() }
                }
                try flush()
            } catch let error as ImportFailure {
                progress.finish()
                let kept = stored == 0 ? "nothing was stored" : "\(stored) documents of earlier batches stay stored"
                printError("error: \(source) line \(error.line): \(error.message); \(kept)")
                throw ExitCode(1)
            }
            progress.finish()
            let seconds = Date().timeIntervalSince(started)
            if json {
                print(try JSONOutput.line(ImportSummary(alias: alias, documents: stored, documentsPerCollection: perCollection, seconds: seconds)))
            } else {
                print("imported \(stored) documents into alias '\(alias)' in \(String(format: "%.3f", seconds)) s")
                for (collection, count) in perCollection.sorted(by: { $0.key < $1.key }) { print("  \(collection): \(count)") }
            }
        }
    }
}

/// `depot import --json` output.
struct ImportSummary: Encodable {
    var alias: String
    var documents: Int
    var documentsPerCollection: [String: Int]
    var seconds: Double
}

/// A failure tied to an input line.
struct ImportFailure: Error {
    var line: Int
    var message: String
}

/// One parsed input line.
struct ImportedLine {
    var line: Int
    var collection: String
    var id: DocumentValue
    var document: DocumentValue

    init(parsing input: LineReader.Line) throws {
        let number = input.number
        line = number
        if let bad = input.firstInvalidUTF8Offset {
            throw ImportFailure(line: number, message: "not valid UTF-8 at byte \(bad) of the line (byte \(input.offset + bad) of the input; bytes count from 0)")
        }
        let value: DocumentValue
        do {
            value = try DocumentValue(json: Data(input.bytes))
        } catch {
            throw ImportFailure(line: number, message: "not valid JSON (\(error))")
        }
        guard case .string(let collection)? = value["collection"] else {
            throw ImportFailure(line: number, message: "expected {\"collection\": C, \"id\": ID, \"document\": {…}}: \"collection\" must be a string")
        }
        guard let id = value["id"], DocumentTransaction.inferredIDKind(id: id, document: .object([])) != nil else {
            throw ImportFailure(line: number, message: "\"id\" must be a string, an integer or a UUID")
        }
        guard let document = value["document"], case .object = document else {
            throw ImportFailure(line: number, message: "\"document\" must be a JSON object")
        }
        self.collection = collection
        self.id = id
        self.document = document
    }
}
