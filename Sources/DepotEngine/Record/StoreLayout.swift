import Foundation

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
///   - `migration/<alias>/<name>` → order number (applied migrations);
///   - `store/sealed` → `1` once a handle with a record transform wrote (records are sealed).
/// - `depot.doc/<alias>/<collection>`: one database per collection and alias; keys are the IDs'
///   key bytes, values are ``Record``s.
/// - `depot.idx/<alias>/<collection>/<name>`: index value → document key (dupsort unless unique).
/// - `depot.sync/<alias>`: status byte + collection → document key (dupsort).
/// - `depot.kv/<alias>`: the key/value kit's records; `depot.changes`: the external change log.
///
/// Nothing is stored in LMDB's main database, whose keys are the names of the named databases.
package enum StoreLayout {
    /// Every named database of the store's own begins with this.
    package static let reservedPrefix = "depot."
    package static let metaDatabase = "depot.meta"
    package static let documentPrefix = "depot.doc/"
    package static let indexPrefix = "depot.idx/"
    package static let syncPrefix = "depot.sync/"

    package static func indexDatabase(alias: String, collection: String, index: String) -> String {
        indexPrefix + alias + "/" + collection + "/" + index
    }

    package static func indexMetaKey(alias: String, collection: String, index: String) -> String {
        "index/" + alias + "/" + collection + "/" + index
    }

    package static func indexMetaPrefix(alias: String, collection: String) -> String {
        "index/" + alias + "/" + collection + "/"
    }

    package static func indexMetaPrefix(alias: String) -> String { "index/" + alias + "/" }

    package static func syncTrackingKey(alias: String, collection: String) -> String {
        "synctrack/" + alias + "/" + collection
    }


    package static let uniqueIDCounterKey = Array("uid/next".utf8)
    package static let changeLogCounterKey = Array("changelog/next".utf8)
    package static let watcherLeasePrefix = "watch/"
    package static let changeLogDatabase = "depot.changes"

    package static func typeVersionKey(alias: String, collection: String) -> String { "typeversion/" + alias + "/" + collection }

    package static func migrationPrefix(alias: String) -> String { "migration/" + alias + "/" }

    package static let schemaVersionKey = Array("schema/version".utf8)

    /// Present once the store's records are sealed by a record transform (see
    /// `TransactionContext.checkSealing()`).
    package static let sealedRecordsKey = Array("store/sealed".utf8)

    package static func syncDatabase(alias: String) -> String { syncPrefix + alias }

    package static func documentDatabase(alias: String, collection: String) -> String {
        documentPrefix + alias + "/" + collection
    }

    package static func descriptorKey(alias: String, collection: String) -> String {
        "collection/" + alias + "/" + collection
    }

    package static func descriptorPrefix(alias: String) -> String { "collection/" + alias + "/" }

    package static let descriptorRoot = "collection/"

    /// The key/value kit's keyspace of an alias, and the collection name change sets give it.
    package static let keyValuePrefix = "depot.kv/"
    package static func keyValueDatabase(alias: String) -> String { keyValuePrefix + alias }
    package static let keyValueCollection = "$kv"


    /// Splits a document database name into alias and collection.
    package static func parse(_ name: String) -> (alias: String, collection: String)? {
        guard name.hasPrefix(documentPrefix) else { return nil }
        let rest = name.dropFirst(documentPrefix.count)
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        return (String(rest[..<slash]), String(rest[rest.index(after: slash)...]))
    }

    package static func validateAlias(_ name: String) throws {
        if name.isEmpty { throw DepotError.invalidAliasName(name, detail: "it is empty") }
        if name.utf8.count > 100 { throw DepotError.invalidAliasName(name, detail: "it is longer than 100 bytes") }
        if name.contains("/") { throw DepotError.invalidAliasName(name, detail: "it contains '/'") }
        if name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw DepotError.invalidAliasName(name, detail: "it contains control characters")
        }
    }

    package static func validateCollection(_ name: String) throws {
        if name.isEmpty { throw DepotError.invalidCollectionName(name, detail: "it is empty") }
        if name.utf8.count > 300 { throw DepotError.invalidCollectionName(name, detail: "it is longer than 300 bytes") }
        if name.contains("/") { throw DepotError.invalidCollectionName(name, detail: "it contains '/'") }
        if name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw DepotError.invalidCollectionName(name, detail: "it contains control characters")
        }
    }

    /// Checks the names of a collection (or, with `collection` nil, a key/value alias) about to
    /// be created: both must be in Unicode normalization form C. Swift compares strings by
    /// canonical equivalence ("é" == "e\u{301}") while LMDB compares bytes: two spellings of one
    /// name would be one collection in memory and two on disk. New names are kept in one
    /// spelling, NFC (what keyboards and JSON text almost always give). Checked only when a name
    /// is first recorded, so that a store holding another spelling stays readable.
    package static func validateNewNames(alias: String, collection: String?) throws {
        if !isNFC(alias) { throw DepotError.invalidAliasName(alias, detail: notNFC) }
        if let collection, !isNFC(collection) { throw DepotError.invalidCollectionName(collection, detail: notNFC) }
        // Change sets and errors name the key/value kit's records so: a collection of that name
        // could not be told from them.
        if collection == keyValueCollection {
            throw DepotError.invalidCollectionName(keyValueCollection, detail: "it names the key/value kit's records")
        }
    }

    /// Whether `name` is in Unicode normalization form C.
    static func isNFC(_ name: String) -> Bool {
        if name.utf8.allSatisfy({ $0 < 0x80 }) { return true }
        return name.utf8.elementsEqual(name.precomposedStringWithCanonicalMapping.utf8)
    }

    static let notNFC = "it is not in Unicode normalization form C (a letter and a combining mark where one precomposed character exists, as 'e' + U+0301 for 'é'): write it in NFC"
}
