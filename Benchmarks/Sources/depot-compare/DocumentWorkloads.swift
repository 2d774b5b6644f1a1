#if !DEPOT_COMPARE_NO_DOCUMENTS
import Depot
#endif
import DepotLMDB

/// **Hook for the Depot document layer (module `Depot`).** The runner already calls these and
/// shows their results in the "documents" column (JSON key `"documents"`); each returns nil
/// ("n/a") until it is filled in. Fill in the bodies; the runner needs no change.
///
/// Contract, for every function: do the work, return the elapsed nanoseconds of the measured part
/// (use `now()`, the monotonic clock of the C baseline), and add something derived from every
/// result into `checksum` so that nothing can be optimized away. `folder` is a fresh, not yet
/// existing folder per round (the runner deletes it afterwards); open the store there with
/// durable defaults.
enum DocumentWorkloads {
    /// Document insert: store every person of `people` as a document (ID = `person.id`) in ONE
    /// transaction, in the given order. Measured: the whole transaction, begin to durable commit
    /// (like GRDB's `dbPool.write {}` and the C baseline `clmdb_put_blobs`).
    static func insert(_ people: [Person], folder: String) throws -> UInt64? {
        nil
    }

    /// Document get by ID: in the same `folder` that `insert` just filled (the store may be
    /// reopened), fetch and decode the document of every ID in `ids` (a random order), in one
    /// read transaction. Add each decoded person's `age` into `checksum`.
    static func get(ids: [String], folder: String, checksum: inout Int) throws -> UInt64? {
        nil
    }

    /// Codec: `iterations` round trips through Depot's binary document codec: encode
    /// `people[i % people.count]`, decode it back, add the decoded `age` into `checksum`.
    /// Compared with Foundation's JSONEncoder + JSONDecoder (column "json").
    static func codecRoundTrip(_ people: [Person], iterations: Int, checksum: inout Int) throws -> UInt64? {
        nil
    }
}
