#if Postgres
/// Memory a connection reuses for its statements' parameters in the form libpq takes them
/// (types, value pointers, lengths and formats in one allocation), so that sending a statement
/// allocates nothing once the buffer has grown to the statement with the most parameters. The
/// values themselves are sent from the ``Parameters``' own bytes, not copied.
///
/// Not `Sendable`: it belongs to one ``LibPQConnection``, used by one thread at a time.
final class ParameterBuffer {
    private var memory: UnsafeMutableRawPointer?
    private var capacity = 0
    /// The most memory kept between statements (1 MiB).
    static let kept = 1 << 20

    deinit { memory?.deallocate() }

    /// Runs `body` with `parameters` as libpq takes them: count, types, values, lengths and
    /// formats (every value binary; SQL NULL as a null pointer). The pointers are valid only
    /// inside `body`, and only until the next call.
    func withLibPQ<R>(_ parameters: Parameters,
                      _ body: (Int32, UnsafePointer<UInt32>?, UnsafePointer<UnsafePointer<CChar>?>?,
                               UnsafePointer<Int32>?, UnsafePointer<Int32>?) -> R) -> R {
        let count = parameters.count
        guard count > 0 else { return body(0, nil, nil, nil, nil) }
        let pointers = count * MemoryLayout<UnsafePointer<CChar>?>.stride
        let integers = count * MemoryLayout<Int32>.stride
        // One byte more: the address of an empty value (which must not be a null pointer,
        // libpq's SQL NULL) when no value has bytes.
        let needed = pointers + 3 * integers + 1
        if needed > capacity || memory == nil {
            memory?.deallocate()
            // Doubling while small; a statement with a great many parameters gets exactly what
            // it needs, and gives it back after (below).
            capacity = needed > Self.kept ? needed : Swift.min(Swift.max(needed, 2 * capacity, 1024), Self.kept)
            memory = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: MemoryLayout<UnsafePointer<CChar>?>.alignment)
        }
        guard let memory else { return body(0, nil, nil, nil, nil) }
        defer {
            if capacity > Self.kept {
                memory.deallocate()
                self.memory = nil
                capacity = 0
            }
        }
        let values = memory.bindMemory(to: UnsafePointer<CChar>?.self, capacity: count)
        let types = (memory + pointers).bindMemory(to: UInt32.self, capacity: count)
        let lengths = (memory + pointers + integers).bindMemory(to: Int32.self, capacity: count)
        let formats = (memory + pointers + 2 * integers).bindMemory(to: Int32.self, capacity: count)
        let empty = UnsafePointer((memory + pointers + 3 * integers).bindMemory(to: CChar.self, capacity: 1))
        return parameters.bytes.withUnsafeBytes { bytes in
            let base = bytes.baseAddress?.assumingMemoryBound(to: CChar.self)
            var offset = 0
            for (index, entry) in parameters.entries.enumerated() {
                types[index] = entry.type
                formats[index] = 1
                guard entry.length >= 0 else {
                    values[index] = nil
                    lengths[index] = 0
                    continue
                }
                values[index] = entry.length == 0 ? empty : base.map { $0 + offset } ?? empty
                lengths[index] = Int32(clamping: entry.length)
                offset += entry.length
            }
            return body(Int32(count), types, values, lengths, formats)
        }
    }
}
#endif
