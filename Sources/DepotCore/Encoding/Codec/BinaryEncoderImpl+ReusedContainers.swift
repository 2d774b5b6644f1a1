/// Reused keyed containers for encoding: as for decoding (see
/// `BinaryDecoderImpl+ReusedContainers.swift`), an encoder that a ``BinaryEncoder`` owns keeps
/// the `KeyedEncodingContainer` it made at each depth and hands it out again for the next object
/// of the same key type there, pointed at that object (`reusedPositions`). Two encoder-level
/// containers alive at one depth are containers of one object (a value's `encode(to:)` and its
/// superclass's, on the same encoder). The owner drops them when it goes.

/// Where an object being encoded is: its frame and its start in the buffer.
struct EncoderPosition {
    var frame: Int
    var start: Int
}

extension BinaryEncoderImpl {
    /// The container for the object just opened at (`frame`, `start`), reused when this depth's
    /// last one had the same key type.
    func reusedContainer<Key: CodingKey>(_: Key.Type, frame: Int, start: Int) -> KeyedEncodingContainer<Key> {
        let d = depth
        // A `KeyedEncodingContainer` is one reference to its box (checked here, so that the casts
        // below only ever turn a box into the container it came from, or back).
        guard MemoryLayout<KeyedEncodingContainer<Key>>.size == MemoryLayout<AnyObject>.size else {
            return KeyedEncodingContainer(BinaryKeyedEncodingContainer<Key>(impl: self, frame: frame, start: start, depth: d))
        }
        while reusedPositions.count <= d {
            reusedPositions.append(EncoderPosition(frame: -1, start: -1))
            reusedContainers.append(nil)
        }
        reusedPositions[d] = EncoderPosition(frame: frame, start: start)
        let key = ObjectIdentifier(Key.self)
        if let reused = reusedContainers[d], reused.key == key {
            // Made below for this key type at this depth.
            return unsafeBitCast(reused.box, to: KeyedEncodingContainer<Key>.self)
        }
        let container = KeyedEncodingContainer(BinaryKeyedEncodingContainer<Key>(reusedBy: self, depth: d))
        reusedContainers[d] = ReusedKeyedContainer(key: key, box: unsafeBitCast(container, to: AnyObject.self))
        return container
    }

    /// Lets go of the reused containers (which refer back to this encoder).
    func dropReusedContainers() {
        reusedContainers.removeAll()
        reusedPositions.removeAll()
    }
}
