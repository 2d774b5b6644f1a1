import Testing
@testable import Depot
@testable import DepotCore

/// Flips a byte near the end of the stored record of `id` in `collection` (alias `default`),
/// without re-sealing it: its checksum no longer matches.
func damageStoredRecord(in store: Store, collection: String, id: String) throws {
    try store.write { tx in
        let target = try #require(try tx.context.existingTarget(alias: "default", collection: collection))
        var bytes = try #require(try tx.context.txn.get(Array(id.utf8), in: target.keyspace))
        bytes[bytes.count - 3] ^= 0xFF
        try tx.context.txn.put(bytes, forKey: Array(id.utf8), in: target.keyspace)
    }
}
