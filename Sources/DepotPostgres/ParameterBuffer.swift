#if Postgres
/// Memory a connection reuses for its statements' parameters in the form libpq takes them
/// (types, value pointers, lengths, formats and the values' bytes in one allocation), so that
/// sending a statement allocates nothing once the buffer has grown to the largest statement.
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
        // At least one byte of values, so that an empty value has an address.
        var valueBytes = 1
        for parameter in parameters { valueBytes += parameter.bytes?.count ?? 0 }
        let pointers = count * MemoryLayout<UnsafePointer<CChar>?>.stride
        let integers = count * MemoryLayout<Int32>.stride
        let needed = pointers + 3 * integers + valueBytes
        if needed > capacity || memory == nil {
            memory?.deallocate()
            // Doubling while small; a large statement gets exactly what it needs, and gives it
            // back after (below): one large document never stays on a connection.
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
        let bytes = (memory + pointers + 3 * integers).bindMemory(to: CChar.self, capacity: valueBytes)
        var offset = 0
        for (index, parameter) in parameters.enumerated() {
            types[index] = parameter.type
            formats[index] = 1
            guard let value = parameter.bytes else {
                values[index] = nil
                lengths[index] = 0
                continue
            }
            value.withUnsafeBytes { source in
                if let base = source.baseAddress { UnsafeMutableRawPointer(bytes + offset).copyMemory(from: base, byteCount: source.count) }
            }
            values[index] = UnsafePointer(bytes + offset)
            lengths[index] = Int32(clamping: value.count)
            offset += value.count
        }
        return body(Int32(count), types, values, lengths, formats)
    }
}
#endif
