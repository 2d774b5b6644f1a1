/// Where the entries of one object lie in the record.
struct ObjectBounds {
    var entries: Int
    var end: Int
    var count: Int
}

extension BinaryDecoderImpl {
    /// The container for the object at ``offset``, reused when this depth's last one had the
    /// same key type (see ``ReusedKeyedContainers``).
    func reusedContainer<Key: CodingKey>(_: Key.Type) throws -> KeyedDecodingContainer<Key> {
        let d = depth
        let bounds = try objectBounds(Key.self, at: offset, depth: d)
        // A `KeyedDecodingContainer` is one reference to its box (checked here, so that the
        // casts below only ever turn a box into the container it came from, or back).
        guard MemoryLayout<KeyedDecodingContainer<Key>>.size == MemoryLayout<AnyObject>.size else {
            return KeyedDecodingContainer(BinaryKeyedDecodingContainer<Key>(
                impl: self, entries: bounds.entries, end: bounds.end, entryCount: bounds.count, depth: d))
        }
        let key = ObjectIdentifier(Key.self)
        if let box = reused.box(for: key, depth: d, at: bounds, filler: ObjectBounds(entries: 0, end: 0, count: 0)) {
            return unsafeBitCast(box, to: KeyedDecodingContainer<Key>.self)
        }
        let container = KeyedDecodingContainer(BinaryKeyedDecodingContainer<Key>(reusedBy: self, depth: d))
        reused.keep(unsafeBitCast(container, to: AnyObject.self), for: key, depth: d)
        return container
    }
}
