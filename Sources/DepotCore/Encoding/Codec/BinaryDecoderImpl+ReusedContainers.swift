/// Reused keyed containers.
///
/// `Decoder.container(keyedBy:)` must return a `KeyedDecodingContainer<Key>`, which boxes the
/// concrete container in an object whose type the runtime looks up for each new `Key` (generic
/// metadata, a witness table) and allocates: about a fifth of decoding a five-field `Codable`
/// document. A decoder that a ``BinaryDecoder`` owns keeps the container it made for each depth
/// and hands it out again for the next object of the same key type at that depth, pointing it at
/// the new object's entries (the container reads its bounds from `reusedBounds`).
///
/// Two decoder-level containers alive at one depth are containers of one object (a value's
/// `init(from:)` and its superclass's, on the same decoder): they read the same bounds. Nested
/// containers (`nestedContainer(keyedBy:forKey:)`) keep bounds of their own.
///
/// The kept boxes refer back to the decoder: its owner (``BinaryDecoder``) drops them when it
/// goes (`dropReusedContainers`), so there is no lasting cycle.

/// Where the entries of one object lie in the record.
struct ObjectBounds {
    var entries: Int
    var end: Int
    var count: Int
}

/// A decoder-level keyed container kept for reuse: its key type and its box.
struct ReusedKeyedContainer {
    let key: ObjectIdentifier
    /// The `KeyedDecodingContainer<Key>`'s only stored property, its box.
    let box: AnyObject
}

extension BinaryDecoderImpl {
    /// The container for the object at ``offset``, reused when this depth's last one had the
    /// same key type.
    func reusedContainer<Key: CodingKey>(_: Key.Type) throws -> KeyedDecodingContainer<Key> {
        let d = depth
        let bounds = try objectBounds(Key.self, at: offset, depth: d)
        // A `KeyedDecodingContainer` is one reference to its box (checked here, so that the
        // casts below only ever turn a box into the container it came from, or back).
        guard MemoryLayout<KeyedDecodingContainer<Key>>.size == MemoryLayout<AnyObject>.size else {
            return KeyedDecodingContainer(BinaryKeyedDecodingContainer<Key>(
                impl: self, entries: bounds.entries, end: bounds.end, entryCount: bounds.count, depth: d))
        }
        while reusedBounds.count <= d {
            reusedBounds.append(ObjectBounds(entries: 0, end: 0, count: 0))
            reusedContainers.append(nil)
        }
        reusedBounds[d] = bounds
        let key = ObjectIdentifier(Key.self)
        if let reused = reusedContainers[d], reused.key == key {
            // Made below for this key type at this depth.
            return unsafeBitCast(reused.box, to: KeyedDecodingContainer<Key>.self)
        }
        let container = KeyedDecodingContainer(BinaryKeyedDecodingContainer<Key>(reusedBy: self, depth: d))
        reusedContainers[d] = ReusedKeyedContainer(key: key, box: unsafeBitCast(container, to: AnyObject.self))
        return container
    }

    /// Lets go of the reused containers (which refer back to this decoder).
    func dropReusedContainers() {
        reusedContainers.removeAll()
        reusedBounds.removeAll()
    }
}
