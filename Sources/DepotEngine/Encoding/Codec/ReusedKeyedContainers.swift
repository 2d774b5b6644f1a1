/// Keyed containers a coder keeps for reuse, one per depth, with where each one's object is.
///
/// `Decoder.container(keyedBy:)` and `Encoder.container(keyedBy:)` must return a
/// `Keyed…Container<Key>`, which boxes the concrete container in an object whose type the runtime
/// looks up for each new `Key` (generic metadata, a witness table) and allocates: about a fifth
/// of coding a five-field `Codable` document. A coder that a ``BinaryDecoder`` or
/// ``BinaryEncoder`` owns keeps the container it made for each depth and hands it out again for
/// the next object of the same key type at that depth; the container reads its object's
/// position from ``positions`` (its slot is its depth).
///
/// Two coder-level containers alive at one depth are containers of one object (a value's
/// `init(from:)` or `encode(to:)` and its superclass's, on the same coder): they read the same
/// position. Nested containers keep positions of their own. An encoder's kept boxes refer back
/// to it (a decoder's hold it unretained, see ``DecoderLifeCell``): its owner drops them
/// (``removeAll()``) when it goes, so there is no lasting cycle.
struct ReusedKeyedContainers<Position> {
    /// Where the object of each depth's kept container is.
    private(set) var positions: [Position] = []
    /// Each depth's kept container: its key type and the ``KeptContainer`` holding it.
    private var boxes: [(key: ObjectIdentifier, box: AnyObject)?] = []

    /// Records that the object of `depth` is at `position`; returns the ``KeptContainer`` kept
    /// there when its key type is `key` (the caller turns it back into its container: the casts
    /// stay where the container's type is concrete).
    mutating func box(for key: ObjectIdentifier, depth: Int, at position: Position, filler: Position) -> AnyObject? {
        while positions.count <= depth {
            positions.append(filler)
            boxes.append(nil)
        }
        positions[depth] = position
        guard let kept = boxes[depth], kept.key == key else { return nil }
        return kept.box
    }

    /// Keeps `box` (a ``KeptContainer``) for key type `key` at `depth`.
    mutating func keep(_ box: AnyObject, for key: ObjectIdentifier, depth: Int) {
        boxes[depth] = (key, box)
    }

    /// Lets go of the kept containers.
    mutating func removeAll() {
        positions.removeAll()
        boxes.removeAll()
    }
}
