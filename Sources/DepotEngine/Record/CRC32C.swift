import CDepotCRC

/// CRC-32C (Castagnoli). Depot's per-record checksum: LMDB 0.9 has none of its own.
///
/// Computed with the CPU's CRC-32C instruction where there is one (x86-64 SSE 4.2 `crc32`,
/// ARMv8 CRC; checked once per process), else with a slicing-by-8 table. Both give identical
/// results; ``isHardwareAccelerated`` tells which one runs.
package enum CRC32C {
    /// Whether this process computes checksums with the CPU's CRC-32C instruction.
    package static let isHardwareAccelerated: Bool = cdepot_crc32c_hardware_available() != 0

    static let tables: [[UInt32]] = {
        var tables = [[UInt32]](repeating: [UInt32](repeating: 0, count: 256), count: 8)
        for i in 0..<256 {
            var crc = UInt32(i)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
            tables[0][i] = crc
        }
        for i in 0..<256 {
            for t in 1..<8 { tables[t][i] = (tables[t - 1][i] >> 8) ^ tables[0][Int(tables[t - 1][i] & 0xFF)] }
        }
        return tables
    }()
    static let flat: [UInt32] = tables.flatMap { $0 }

    /// The checksum of `bytes`, continuing from `crc` (0 to start).
    package static func checksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        if isHardwareAccelerated, let base = bytes.baseAddress {
            return cdepot_crc32c_hardware(crc, base, bytes.count)
        }
        return software(bytes, continuing: crc)
    }

    /// The checksum of a record's checksummed bytes: bytes 0..<10 and 14..<count of the `count`
    /// (at least 14) bytes at `base` (the 4 bytes between hold the stored checksum), in one call.
    package static func record(_ base: UnsafeRawPointer, count: Int) -> UInt32 {
        if isHardwareAccelerated { return cdepot_crc32c_record_hardware(base, count) }
        let head = software(UnsafeRawBufferPointer(start: base, count: 10))
        return software(UnsafeRawBufferPointer(start: base + 14, count: count - 14), continuing: head)
    }

    /// The checksum with the CPU's instruction; nil on a CPU without one.
    static func hardware(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32? {
        guard isHardwareAccelerated else { return nil }
        guard let base = bytes.baseAddress else { return crc }
        return cdepot_crc32c_hardware(crc, base, bytes.count)
    }

    /// The checksum with the slicing-by-8 table (the fallback, and the reference in tests).
    static func software(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        var c = ~crc
        flat.withUnsafeBufferPointer { t in
            var p = 0
            let n = bytes.count
            while p + 8 <= n {
                let lo = bytes.loadUnaligned(fromByteOffset: p, as: UInt32.self).littleEndian ^ c
                let hi = bytes.loadUnaligned(fromByteOffset: p + 4, as: UInt32.self).littleEndian
                c = t[7 * 256 + Int(lo & 0xFF)] ^ t[6 * 256 + Int((lo >> 8) & 0xFF)]
                    ^ t[5 * 256 + Int((lo >> 16) & 0xFF)] ^ t[4 * 256 + Int(lo >> 24)]
                    ^ t[3 * 256 + Int(hi & 0xFF)] ^ t[2 * 256 + Int((hi >> 8) & 0xFF)]
                    ^ t[1 * 256 + Int((hi >> 16) & 0xFF)] ^ t[Int(hi >> 24)]
                p += 8
            }
            while p < n {
                c = t[Int((c ^ UInt32(bytes[p])) & 0xFF)] ^ (c >> 8)
                p += 1
            }
        }
        return ~c
    }

    /// The checksum of a byte array.
    package static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0) }
    }
}
