import Testing
@testable import Depot
@testable import DepotCore
@testable import DepotEngine

/// The hardware CRC-32C path (SSE 4.2 / ARMv8 CRC) and the software table agree on every length
/// and alignment, and when chained with `continuing:`.
@Suite struct CRC32CTests {
    /// A seeded xorshift generator, so failures are reproducible.
    struct Bytes {
        var state: UInt64
        mutating func next(_ count: Int) -> [UInt8] {
            (0..<count).map { _ in
                state ^= state << 13; state ^= state >> 7; state ^= state << 17
                return UInt8(truncatingIfNeeded: state)
            }
        }
    }

    @Test func knownVectors() {
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
        #expect(CRC32C.checksum([UInt8](repeating: 0, count: 32)) == 0x8A91_36AA)
        #expect(CRC32C.checksum([UInt8](repeating: 0xFF, count: 32)) == 0x62A8_AB43)
        #expect(CRC32C.checksum([]) == 0)
        "123456789".utf8.withContiguousStorageIfAvailable { bytes in
            let raw = UnsafeRawBufferPointer(bytes)
            #expect(CRC32C.software(raw) == 0xE306_9283)
        }
    }

    @Test func everyLengthAndOffsetAgree() {
        var random = Bytes(state: 0x9E37_79B9_7F4A_7C15)
        let buffer = random.next(300 + 8)
        buffer.withUnsafeBytes { all in
            for offset in 0..<8 {
                for length in 0...300 {
                    let slice = UnsafeRawBufferPointer(rebasing: all[offset..<(offset + length)])
                    let soft = CRC32C.software(slice)
                    #expect(CRC32C.checksum(slice) == soft, "length \(length) at offset \(offset)")
                    if let hard = CRC32C.hardware(slice) {
                        #expect(hard == soft, "length \(length) at offset \(offset)")
                    }
                }
            }
        }
    }

    /// A record's checksum (bytes 0..<10 and 14..<count, the stored checksum between) in one
    /// call, on the hardware path where there is one: the same as the two parts in software.
    @Test func aRecordsChecksumIsItsTwoParts() {
        var random = Bytes(state: 0x5EED)
        let buffer = random.next(200 + 8)
        buffer.withUnsafeBytes { all in
            for offset in 0..<8 {
                for count in 14...200 {
                    let record = UnsafeRawBufferPointer(rebasing: all[offset..<(offset + count)])
                    let head = CRC32C.software(UnsafeRawBufferPointer(rebasing: record[0..<10]))
                    let expected = CRC32C.software(UnsafeRawBufferPointer(rebasing: record[14...]), continuing: head)
                    #expect(CRC32C.record(record.baseAddress!, count: count) == expected, "\(count) bytes at offset \(offset)")
                }
            }
        }
    }

    @Test func largeBuffersAgree() {
        var random = Bytes(state: 42)
        for length in [4_096, 65_537, 1_000_003] {
            let bytes = random.next(length)
            bytes.withUnsafeBytes { raw in
                let soft = CRC32C.software(raw)
                #expect(CRC32C.checksum(raw) == soft, "length \(length)")
                if let hard = CRC32C.hardware(raw) { #expect(hard == soft, "length \(length)") }
            }
        }
    }

    @Test func chainingAgrees() {
        var random = Bytes(state: 7)
        let bytes = random.next(1_000)
        bytes.withUnsafeBytes { raw in
            let whole = CRC32C.software(raw)
            for split in [0, 1, 7, 8, 10, 13, 64, 333, 999, 1_000] {
                let head = UnsafeRawBufferPointer(rebasing: raw[..<split])
                let tail = UnsafeRawBufferPointer(rebasing: raw[split...])
                #expect(CRC32C.software(tail, continuing: CRC32C.software(head)) == whole, "split \(split)")
                #expect(CRC32C.checksum(tail, continuing: CRC32C.checksum(head)) == whole, "split \(split)")
                if let h = CRC32C.hardware(head), let t = CRC32C.hardware(tail, continuing: h) {
                    #expect(t == whole, "split \(split)")
                    #expect(CRC32C.hardware(tail, continuing: CRC32C.software(head)) == whole, "split \(split)")
                }
            }
            // Continuing from arbitrary values (not only results of earlier calls).
            for start: UInt32 in [1, 0xFFFF_FFFF, 0xDEAD_BEEF] {
                #expect(CRC32C.checksum(raw, continuing: start) == CRC32C.software(raw, continuing: start))
            }
        }
    }

    #if arch(x86_64) || arch(arm64)
    @Test func hardwareIsUsedWhereTheCPUHasIt() {
        // Every x86-64 CPU Swift runs on in practice has SSE 4.2; every arm64 one has CRC. If this
        // fails on an exotic machine, the software path still gives correct results.
        #expect(CRC32C.isHardwareAccelerated)
    }
    #endif
}
