import DepotLMDB

/// How documents are laid out in LMDB's named databases.
///
/// - `depot.meta`: the store's own records (every meta key is built here):
///   - `collection/<alias>/<collection>` → ID kind (collection descriptors);
///   - `index/<alias>/<collection>/<name>` → index definition (``IndexDefinition``; its presence
///     means the index is built and kept by every writer);
///   - `synctrack/<alias>/<collection>` → `1` when the collection keeps a sync-status index;
///   - `typeversion/<alias>/<collection>` → the highest document-type version that wrote it;
///   - `schema/version` → big-endian counter bumped by every index or tracking change;
///   - `uid/next` (unique-ID counter), `changelog/next` and `watch/<token>` (external change log);
///   - `migration/<alias>/<name>` → order number (applied migrations).
/// - `depot.doc/<alias>/<collection>`: one database per collection and alias; keys are the IDs'
///   key bytes, values are ``Record``s.
/// - `depot.idx/<alias>/<collection>/<name>`: index value → document key (dupsort unless unique).
/// - `depot.sync/<alias>`: status byte + collection → document key (dupsort).
/// - `depot.kv/<alias>`: the key/value kit's records; `depot.changes`: the external change log.
///
/// Nothing is stored in LMDB's main database, whose keys are the names of the named databases.
enum StoreLayout {
    /// Every named database of the store's own begins with this.
    static let reservedPrefix = "depot."
    static let metaDatabase = "depot.meta"
    static let documentPrefix = "depot.doc/"
    static let indexPrefix = "depot.idx/"
    static let syncPrefix = "depot.sync/"

    static func indexDatabase(alias: String, collection: String, index: String) -> String {
        indexPrefix + alias + "/" + collection + "/" + index
    }

    static func indexMetaKey(alias: String, collection: String, index: String) -> String {
        "index/" + alias + "/" + collection + "/" + index
    }

    static func indexMetaPrefix(alias: String, collection: String) -> String {
        "index/" + alias + "/" + collection + "/"
    }

    static func indexMetaPrefix(alias: String) -> String { "index/" + alias + "/" }

    static func syncTrackingKey(alias: String, collection: String) -> String {
        "synctrack/" + alias + "/" + collection
    }


    static let uniqueIDCounterKey = Array("uid/next".utf8)
    static let changeLogCounterKey = Array("changelog/next".utf8)
    static let watcherLeasePrefix = "watch/"
    static let changeLogDatabase = "depot.changes"

    static func typeVersionKey(alias: String, collection: String) -> String { "typeversion/" + alias + "/" + collection }

    static func migrationPrefix(alias: String) -> String { "migration/" + alias + "/" }

    static let schemaVersionKey = Array("schema/version".utf8)

    static func syncDatabase(alias: String) -> String { syncPrefix + alias }

    static func documentDatabase(alias: String, collection: String) -> String {
        documentPrefix + alias + "/" + collection
    }

    static func descriptorKey(alias: String, collection: String) -> String {
        "collection/" + alias + "/" + collection
    }

    static func descriptorPrefix(alias: String) -> String { "collection/" + alias + "/" }

    static let descriptorRoot = "collection/"

    /// The key/value kit's keyspace of an alias, and the collection name change sets give it.
    static let keyValuePrefix = "depot.kv/"
    static func keyValueDatabase(alias: String) -> String { keyValuePrefix + alias }
    static let keyValueCollection = "$kv"


    /// Splits a document database name into alias and collection.
    static func parse(_ name: String) -> (alias: String, collection: String)? {
        guard name.hasPrefix(documentPrefix) else { return nil }
        let rest = name.dropFirst(documentPrefix.count)
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        return (String(rest[..<slash]), String(rest[rest.index(after: slash)...]))
    }

    static func validateAlias(_ name: String) throws {
        if name.isEmpty { throw DepotError.invalidAliasName(name, detail: "it is empty") }
        if name.utf8.count > 100 { throw DepotError.invalidAliasName(name, detail: "it is longer than 100 bytes") }
        if name.contains("/") { throw DepotError.invalidAliasName(name, detail: "it contains '/'") }
        if name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw DepotError.invalidAliasName(name, detail: "it contains control characters")
        }
    }

    static func validateCollection(_ name: String) throws {
        if name.isEmpty { throw DepotError.invalidCollectionName(name, detail: "it is empty") }
        if name.utf8.count > 300 { throw DepotError.invalidCollectionName(name, detail: "it is longer than 300 bytes") }
        if name.contains("/") { throw DepotError.invalidCollectionName(name, detail: "it contains '/'") }
        if name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw DepotError.invalidCollectionName(name, detail: "it contains control characters")
        }
    }
}
