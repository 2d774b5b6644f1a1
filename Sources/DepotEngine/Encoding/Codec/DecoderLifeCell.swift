import CDepotAtomic

/// Two words that say, without touching a decoder, whether it is still alive and which of its
/// decodes is running: what lets a keyed decoding container refer to its decoder without
/// retaining it. (A cell is three words: the third links it into a free list.)
///
/// The standard library's `KeyedDecodingContainer` box copies the concrete container on every
/// `decode(_:forKey:)`; a container holding a strong reference retains and releases its decoder
/// each time (a five-field `Codable` get: 7,114 instructions with it, 6,926 without, see
/// `Benchmarks/results/instructions-b83ac3b.md`). ``BinaryKeyedDecodingContainer`` holds
/// its decoder unretained instead, and reads it only after its cell says the decoder is alive.
/// The cell's memory is never freed (a cell goes back to a free list, see `cdepot_cell_take`,
/// when its decoder goes), so reading it is always safe, even for a container kept long after
/// its decoder is gone:
/// - word 0, ``decodeNumber``: the decode running now (``BinaryDecoderImpl/begin(reader:resolver:offset:)``
///   and ``BinaryDecoderImpl/end()`` each move it on). A decoder that takes a cell goes on from
///   the number the cell holds, so a number never comes back for one cell.
/// - word 1, ``life``: moved on when the decoder that holds the cell goes.
/// A container made under a number holds while word 0 still has it: the decoder (or, for a
/// super decoder, the root decoder that keeps it, see ``BinaryDecoderImpl/superDecoders``)
/// is then alive and in that decode. A container a decoder keeps for reuse holds while word 1
/// has the life it was made in.
struct DecoderLifeCell {
    let words: UnsafeMutablePointer<UInt64>

    /// A cell from the free list, or a new one.
    static func take() -> DecoderLifeCell {
        if let words = cdepot_cell_take() { return DecoderLifeCell(words: words) }
        let words = UnsafeMutablePointer<UInt64>.allocate(capacity: 3) // never freed: see above
        words.initialize(repeating: 0, count: 3)
        return DecoderLifeCell(words: words)
    }

    /// Ends the life of the decoder holding the cell (every container it made stops reading),
    /// and gives the cell back.
    func give() {
        words[0] &+= 1
        words[1] &+= 1
        cdepot_cell_give(words)
    }

    /// The decode running now (see the type's notes).
    @inline(__always)
    var decodeNumber: UInt64 {
        get { words[0] }
        nonmutating set { words[0] = newValue }
    }

    /// The life of the decoder holding the cell (see the type's notes).
    @inline(__always)
    var life: UInt64 { words[1] }
}
