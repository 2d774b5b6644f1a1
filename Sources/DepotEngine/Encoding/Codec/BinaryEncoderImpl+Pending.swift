/// The pending entries of a `Codable` encode: a keyed container writes its short entries into
/// memory of the encoder's own with plain stores (``ShortBytes``), and they are moved to the
/// output in one copy when it is next used (through ``BinaryEncoderImpl/buffer``), usually
/// when the object closes: one append for the object's entries instead of one per entry.
extension BinaryEncoderImpl {
    /// Bytes of pending memory (at least ``ShortBytes/room``).
    static var pendingCapacity: Int { 1024 }

    /// Stores an entry with `body` after the pending ones; false (nothing kept) when `body`
    /// returns false (the entry is not short: the caller writes it to ``buffer``).
    @inline(__always)
    func appendShort(_ body: (inout ShortBytes) -> Bool) -> Bool {
        if pending == nil || Self.pendingCapacity - pendingCount < ShortBytes.room { makePendingRoom() }
        guard let pending else { return false }
        var out = ShortBytes(memory: UnsafeMutableBufferPointer(
            start: (pending + pendingCount).assumingMemoryBound(to: UInt8.self), count: ShortBytes.room))
        guard body(&out) else { return false }
        pendingCount += out.count
        return true
    }

    /// Makes room for one more short entry: allocates the pending memory, or moves what it
    /// holds to the output.
    @inline(never)
    func makePendingRoom() {
        if pending == nil {
            pending = UnsafeMutableRawPointer.allocate(byteCount: Self.pendingCapacity, alignment: 8)
        } else {
            flushPending()
        }
    }

    /// Moves the pending entries to the output.
    @inline(never)
    func flushPending() {
        guard let pending else { return }
        output.append(contentsOf: UnsafeRawBufferPointer(start: pending, count: pendingCount))
        pendingCount = 0
    }
}
