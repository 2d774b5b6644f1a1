/// A record being written or decoded right now in a transaction (a document being parked, or
/// decoded while references are resolved): its collection and its key, borrowed for the length
/// of the operation. What cycle checks and dangling-reference messages name.
@usableFromInline
package struct RecordInProgress {
    /// The alias of the record's collection.
    package var alias: String
    /// The record's collection.
    package var collection: String
    /// The record's key, borrowed from the caller's frame.
    package var key: UnsafeRawBufferPointer

    package init(alias: String, collection: String, key: UnsafeRawBufferPointer) {
        self.alias = alias
        self.collection = collection
        self.key = key
    }

    /// Whether this is the record of `other` in `collection` of `alias`.
    package func matches(alias: String, collection: String, key other: UnsafeRawBufferPointer) -> Bool {
        self.collection == collection && self.alias == alias && key.elementsEqual(other)
    }
}
