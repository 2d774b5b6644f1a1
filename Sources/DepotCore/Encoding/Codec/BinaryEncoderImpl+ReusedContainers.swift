/// Where an object being encoded is: its frame and its start in the buffer.
struct EncoderPosition {
    var frame: Int
    var start: Int
}

extension BinaryEncoderImpl {
    /// The container for the object just opened at (`frame`, `start`), reused when this depth's
    /// last one had the same key type (see ``ReusedKeyedContainers``).
    func reusedContainer<Key: CodingKey>(_: Key.Type, frame: Int, start: Int) -> KeyedEncodingContainer<Key> {
        let d = depth
        // A `KeyedEncodingContainer` is one reference to its box (checked here, so that the casts
        // below only ever turn a box into the container it came from, or back).
        guard MemoryLayout<KeyedEncodingContainer<Key>>.size == MemoryLayout<AnyObject>.size else {
            return KeyedEncodingContainer(BinaryKeyedEncodingContainer<Key>(impl: self, frame: frame, start: start, depth: d))
        }
        let key = ObjectIdentifier(Key.self)
        let position = EncoderPosition(frame: frame, start: start)
        if let box = reused.box(for: key, depth: d, at: position, filler: EncoderPosition(frame: -1, start: -1)) {
            return unsafeBitCast(box, to: KeyedEncodingContainer<Key>.self)
        }
        let container = KeyedEncodingContainer(BinaryKeyedEncodingContainer<Key>(reusedBy: self, depth: d))
        reused.keep(unsafeBitCast(container, to: AnyObject.self), for: key, depth: d)
        return container
    }
}
