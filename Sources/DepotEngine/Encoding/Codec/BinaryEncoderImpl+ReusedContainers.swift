/// Where an object being encoded is: its frame and its start in the buffer.
struct EncoderPosition {
    var frame: Int
    var start: Int
    /// The encode it is a position in (``BinaryEncoderImpl/encodeNumber``).
    var encode: UInt64

    /// A position that is never current (a slot a kept container's encoder no longer has).
    static var none: EncoderPosition { EncoderPosition(frame: -1, start: -1, encode: .max) }
}

extension BinaryEncoderImpl {
    /// The container for the object just opened at (`frame`, `start`), reused when this depth's
    /// last one had the same key type (see ``ReusedKeyedContainers``).
    func reusedContainer<Key: CodingKey>(_: Key.Type, frame: Int, start: Int) -> KeyedEncodingContainer<Key> {
        let d = depth
        let key = ObjectIdentifier(Key.self)
        let position = EncoderPosition(frame: frame, start: start, encode: encodeNumber)
        if let kept = reused.box(for: key, depth: d, at: position, filler: .none) {
            // Kept for this key type (checked above): see ``KeptContainer``.
            return unsafeDowncast(kept, to: KeptContainer<KeyedEncodingContainer<Key>>.self).container()
        }
        return newReusedContainer(Key.self, depth: d)
    }

    /// Makes and keeps the container of `depth` for `Key` (apart, so that the metadata it needs
    /// is looked up only here).
    @inline(never)
    private func newReusedContainer<Key: CodingKey>(_: Key.Type, depth d: Int) -> KeyedEncodingContainer<Key> {
        let container = KeyedEncodingContainer(BinaryKeyedEncodingContainer<Key>(reusedBy: self, depth: d))
        reused.keep(KeptContainer(container), for: ObjectIdentifier(Key.self), depth: d)
        return container
    }
}
