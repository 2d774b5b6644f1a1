/// Where the entries of one object lie in the record.
struct ObjectBounds {
    var entries: Int
    var end: Int
    var count: Int
    /// The decode they were read in (``BinaryDecoderImpl/currentNumber``): they hold only then.
    var decode: UInt64

    /// Bounds that are never current (a slot a kept container's decoder no longer has).
    static var none: ObjectBounds { ObjectBounds(entries: 0, end: 0, count: 0, decode: .max) }
}

extension BinaryDecoderImpl {
    /// The container for the object at ``offset``, reused when this depth's last one had the
    /// same key type (see ``ReusedKeyedContainers``).
    func reusedContainer<Key: CodingKey>(_: Key.Type) throws -> KeyedDecodingContainer<Key> {
        let d = depth
        let bounds = try objectBounds(Key.self, at: offset, depth: d)
        let key = ObjectIdentifier(Key.self)
        if let kept = reused.box(for: key, depth: d, at: bounds, filler: .none) {
            // Kept for this key type (checked above): no run-time metadata look-up on the way out.
            return unsafeDowncast(kept, to: KeptContainer<KeyedDecodingContainer<Key>>.self).container()
        }
        return newReusedContainer(Key.self, depth: d)
    }

    /// Makes and keeps the container of `depth` for `Key` (apart, so that the metadata it needs
    /// is looked up only here).
    @inline(never)
    private func newReusedContainer<Key: CodingKey>(_: Key.Type, depth d: Int) -> KeyedDecodingContainer<Key> {
        let container = KeyedDecodingContainer(BinaryKeyedDecodingContainer<Key>(reusedBy: self, depth: d))
        reused.keep(KeptContainer(container), for: ObjectIdentifier(Key.self), depth: d)
        return container
    }
}

/// A container a coder keeps for reuse (see ``ReusedKeyedContainers``), in an object whose
/// generic parameter is the container's type: handing it out again copies it with the type
/// that the object's own metadata holds. (Code generic over the key would look up
/// `Keyed…Container<Key>`'s metadata at run time on every call: about 160 instructions.)
final class KeptContainer<Container> {
    private let kept: Container

    init(_ container: Container) { kept = container }

    /// A copy of the kept container. Not inlined: here the container's type comes from `self`.
    @inline(never)
    func container() -> Container { kept }
}
