extension TransactionContext {
    // MARK: Buffers

    /// An empty buffer with capacity; give it back with ``giveBack(_:)``.
    package func takeBuffer() -> [UInt8] {
        var b: [UInt8] = []
        if !recordBufferLent {
            recordBufferLent = true
            swap(&b, &recordBuffer)
        } else {
            sparesLent += 1
            if let spare = spareBuffers.popLast() { b = spare }
        }
        if !b.isEmpty { b.removeAll(keepingCapacity: true) }
        if b.capacity < 256 { b.reserveCapacity(256) }
        return b
    }

    /// Takes back the buffer taken last.
    package func giveBack(_ buffer: [UInt8]) {
        if sparesLent > 0 {
            sparesLent -= 1
            spareBuffers.append(buffer)
        } else {
            recordBuffer = buffer
            recordBufferLent = false
        }
    }
}
