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
            References are {"$ref": {"collection": C, "id": ID}}, as 'depot export' prints them.
            """,
        subcommands: [Put.self, Get.self, Delete.self])

    /// Options naming one document.
    struct Target: ParsableArguments {
        @OptionGroup var location: PathOption
        @Option(help: "The store alias.") var alias: String = Store.defaultAlias
        @Option(help: "The collection.") var collection: String

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
        @Option(help: "The document's ID.") var id: String?
        @Argument(help: "The document as a JSON object; '-' reads it from standard input.") var json: String

        func validate() throws { try DocCommand.checkID(id) }

        func run() throws {
            try reportingErrors {
                let text = try argumentValue(json)
                let document: DocumentValue
                do { document = try DocumentValue(jsonString: text) } catch {
                    printError("error: the document is not valid JSON: \(error)")
                    throw ExitCode(1)
                }
                guard case .object = document else {
                    if case .reference = document {
                        printError("error: the document is a reference ({\"$ref\": …}); a document is a JSON object of fields")
                    } else {
                        printError("error: the document must be a JSON object ({…})")
                    }
                    throw ExitCode(1)
                }
                let store = try Store(path: target.location.path).alias(target.alias)
                let revision = try store.write { tx in
                    let kind = try tx.collectionInfo(target.collection)?.idKind
                    let resolved = try DocumentIDRules.resolve(body: document, idText: id, kind: kind, collection: target.collection)
                    return try tx.put(document: resolved.document, in: target.collection, id: resolved.id)
                }
                print("stored \(target.collection) document (revision \(revision))")
            }
        }
    }

    struct Get: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "get", abstract: "Print a document as one line of JSON. A missing one exits with status 1.")
        @OptionGroup var target: Target
        @Option(help: "The document's ID.") var id: String

        func validate() throws { try DocCommand.checkID(id) }

        func run() throws {
            try reportingErrors {
                let env = try openExisting(target.location.path)
                let store = try Store(environment: env)
                guard try store.aliases().contains(target.alias) else {
                    printError("error: no alias named '\(target.alias)' in '\(env.path)'")
                    throw ExitCode(1)
                }
                let document = try store.alias(target.alias).read { tx -> DocumentValue? in
                    guard let kind = try tx.collectionInfo(target.collection)?.idKind else {
                        printError("error: no collection named '\(target.collection)' in alias '\(target.alias)'")
                        throw ExitCode(1)
                    }
                    return try tx.document(in: target.collection, id: DocumentIDRules.id(id, kind: kind, collection: target.collection))
                }
                guard let document else {
                    printError("error: no \(target.collection) document with ID '\(id)'")
                    throw ExitCode(1)
                }
                print(try document.jsonString(sortedKeys: false))
            }
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete a document. A missing one exits with status 1.")
        @OptionGroup var target: Target
        @Option(help: "The document's ID.") var id: String

        func validate() throws { try DocCommand.checkID(id) }

        func run() throws {
            try reportingErrors {
                let env = try openExisting(target.location.path, readOnly: false)
                let store = try Store(environment: env).alias(target.alias)
                let deleted = try store.write { tx -> Bool in
                    guard let kind = try tx.collectionInfo(target.collection)?.idKind else { return false }
                    return try tx.deleteDocument(in: target.collection, id: DocumentIDRules.id(id, kind: kind, collection: target.collection))
                }
                guard deleted else {
                    printError("error: no \(target.collection) document with ID '\(id)'")
                    throw ExitCode(1)
                }
            }
        }
    }
}
