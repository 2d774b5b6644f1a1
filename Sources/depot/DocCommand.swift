import ArgumentParser
import Depot
import Foundation

struct DocCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doc",
        abstract: "Put, get or delete one document of a collection, as JSON.",
        discussion: """
            Examples:
              depot doc put --collection Person --id 7 '{"name": "Ada", "age": 36}'
              echo '{"id": "p1", "name": "Grace"}' | depot doc put --collection Person -
              depot doc get --collection Person --id 7
              depot doc delete --collection Person --id 7
            References are {"$ref": {"collection": C, "id": ID}}; dates, UUIDs and bytes \
            {"$date": "2026-01-31T12:00:00Z"}, {"$uuid": "…"}, {"$binary": {"base64": "…", "subType": "00"}}, \
            as 'depot export' prints them (--plain: as strings).
            """,
        subcommands: [Put.self, Get.self, Delete.self])

    /// Options naming one document.
    struct Target: ParsableArguments {
        @OptionGroup var location: StoreOption
        @Option(help: "The store alias.") var alias: String = Store.defaultAlias
        @Option(help: "The collection.") var collection: String
        @OptionGroup var output: OutputOptions

        func validate() throws {
            if alias.isEmpty { throw ValidationError("--alias must not be empty") }
            if collection.isEmpty { throw ValidationError("--collection must not be empty") }
            do { try Store.validateAliasName(alias) } catch { throw ValidationError("--alias: \(error)") }
            do { try Store.validateCollectionName(collection) } catch { throw ValidationError("--collection: \(error)") }
        }
    }

    /// `--id` names a document: it is not empty.
    static func checkID(_ id: String?) throws {
        if let id, id.isEmpty { throw ValidationError("--id must not be empty") }
    }

    struct Put: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "put",
            abstract: "Store a JSON object as a document (replacing one with the same ID).",
            discussion: """
                Without --id, the document's identifying attribute (id, else <collection>ID, e.g. personID) is its ID. \
                A document without one gets "id" filled in from --id; one whose ID differs from --id is refused. \
                --id keeps its text (00123 is the string "00123") unless the collection has integer (or UUID) IDs. \
                A collection's ID kind never changes: an ID of another kind is refused.
                """)
        @OptionGroup var target: Target
        @Option(parsing: .unconditional, help: "The document's ID (a negative one as it is: --id -7).") var id: String?
        @Argument(help: "The document as a JSON object; '-' reads it from standard input (at most 256 MiB).") var json: String
        @Flag(help: "Read objects such as {\"$date\": …} as plain objects, not as typed values.") var plain = false
        @Option(name: .customLong("sync-status"), help: ArgumentHelp("The document's sync status: notSynced (as parking gives), synced, syncing or undetermined.", valueName: "status"))
        var syncStatus = SyncStatus.notSynced.name

        func validate() throws {
            try DocCommand.checkID(id)
            if SyncStatus(name: syncStatus) == nil {
                throw ValidationError("--sync-status must be notSynced, synced, syncing or undetermined, got '\(syncStatus)'")
            }
        }

        func run() throws {
            try reportingErrors {
                let text = try argumentValue(json)
                let document: DocumentValue
                do { document = try DocumentValue(jsonString: text, style: plain ? .plain : .extended) } catch {
                    throw CLIFailure(code: "invalidJSON", message: "the document is not valid JSON: \(error)")
                }
                guard case .object = document else {
                    if case .reference = document {
                        throw CLIFailure(code: "notAnObject", message: "the document is a reference ({\"$ref\": …}); a document is a JSON object of fields")
                    }
                    throw CLIFailure(code: "notAnObject", message: "the document must be a JSON object ({…})")
                }
                let (resolved, revision) = try target.location.withStore(.create) { store in
                    try store.alias(target.alias).write { tx in
                        let kind = try tx.collectionInfo(target.collection)?.idKind
                        let resolved = try DocumentIDRules.resolve(body: document, idText: id, kind: kind, collection: target.collection)
                        let status = SyncStatus(name: syncStatus) ?? .notSynced // checked by validate()
                        return (resolved, try tx.put(document: resolved.document, in: target.collection, id: resolved.id, syncStatus: status))
                    }
                }
                StandardOutput.noteCommitted("the document was stored")
                if target.output.json {
                    print(try JSONOutput.line(PutReport(collection: target.collection, id: resolved.id, revision: revision)))
                } else {
                    print("stored \(target.collection) document (revision \(revision))")
                }
            }
        }
    }

    /// The options of `get` and `delete`: the store, alias, collection and the document's `--id`.
    struct OneDocument: ParsableArguments {
        @OptionGroup var target: Target
        @Option(parsing: .unconditional, help: "The document's ID (a negative one as it is: --id -7).") var id: String

        func validate() throws { try DocCommand.checkID(id) }

        /// The stored ID that `--id` names in the collection (by its ID kind), or nil when the
        /// alias has no such collection.
        func storedID(in tx: DocumentTransaction) throws -> DocumentValue? {
            guard let kind = try tx.collectionInfo(target.collection)?.idKind else { return nil }
            return try DocumentIDRules.id(id, kind: kind, collection: target.collection)
        }

        /// The error for a collection the alias does not hold.
        var noCollection: CLIFailure {
            CLIFailure(code: "noCollection", message: "no collection named '\(target.collection)' in alias '\(target.alias)'")
        }

        /// The error for an ID the collection does not hold.
        var notFound: CLIFailure { CLIFailure(code: "notFound", message: "no \(target.collection) document with ID '\(id)'") }
    }

    struct Get: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "get", abstract: "Print a document as one line of JSON. A missing one exits with status 1.")
        @OptionGroup var document: OneDocument
        @Flag(help: "Print dates, UUIDs and bytes as plain strings (as 'depot export --plain' does).") var plain = false

        func run() throws {
            try reportingErrors {
                let target = document.target
                let found = try target.location.withStore(.read) { store in
                    try StoreOption.existingAlias(target.alias, of: store).read { tx -> DocumentValue? in
                        guard let id = try document.storedID(in: tx) else {
                            throw document.noCollection
                        }
                        return try tx.document(in: target.collection, id: id)
                    }
                }
                guard let found else { throw document.notFound }
                print(try found.jsonString(sortedKeys: false, style: plain ? .plain : .extended))
            }
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete a document. A missing one exits with status 1.")
        @OptionGroup var document: OneDocument

        func run() throws { try reportingErrors { if !(try delete()) { throw document.notFound } } }

        /// Deletes the document; false when it is not stored.
        private func delete() throws -> Bool {
            // A missing alias or collection is named as `doc get` names it (not as a missing document).
            let target = document.target
            let deleted = try target.location.withStore(.write) { store in
                try StoreOption.existingAlias(target.alias, of: store).write { tx in
                    guard let id = try document.storedID(in: tx) else {
                        throw document.noCollection
                    }
                    return try tx.deleteDocument(in: target.collection, id: id)
                }
            }
            if deleted { StandardOutput.noteCommitted("the document was deleted") }
            return deleted
        }
    }
}

/// `depot doc put --json` output.
struct PutReport: Encodable {
    var collection: String
    var id: DocumentValue
    var revision: UInt64
}
