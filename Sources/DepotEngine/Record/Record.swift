/// The envelope of every stored document:
///
/// ```
/// offset 0   u8   record format version (1)
/// offset 1   u8   flags (bit 0: content-keyed; bits 1-3: sync status, see SyncStatus)
/// offset 2   u64  revision, little-endian (1 on creation, +1 on every update)
/// offset 10  u32  CRC-32C of bytes 0..<10 and 14..<end, little-endian
/// offset 14  …    the document in Depot's binary Codable format
/// ```
///
/// The checksum is verified on every read; a mismatch is ``DepotError/checksumMismatch(alias:collection:id:)``.
///
/// A store with a ``RecordTransform`` stores `0xE5 | the transform's output` instead (the whole
/// record above sealed): the marker byte, never a format version, lets a reader without the key
/// tell a sealed record from a damaged one (``DepotError/Code/transformRequired``).
@usableFromInline
package enum Record {
    @usableFromInline package static let version: UInt8 = 1
    @usableFromInline package static let headerSize = 14
    /// Flag bit 0: the record is keyed by its content (an unidentified value).
    package static let contentFlag: UInt8 = 1
    /// The first byte of a record sealed by a ``RecordTransform``.
    package static let sealedMarker: UInt8 = 0xE5

    package struct Header: Equatable {
        package var flags: UInt8
        package var revision: UInt64

        package init(flags: UInt8, revision: UInt64) {
            self.flags = flags
            self.revision = revision
        }
    }

    /// Writes a header placeholder; call ``seal(_:)`` after appending the payload.
    package static func begin(_ buffer: inout [UInt8], flags: UInt8, revision: UInt64) {
        if !buffer.isEmpty { buffer.removeAll(keepingCapacity: true) }
        // One append of the 14 bytes (no temporary array: this runs once per stored record).
        var header: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &header) { h in
            h[0] = version
            h[1] = flags
            h.storeBytes(of: revision.littleEndian, toByteOffset: 2, as: UInt64.self)
            buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: h[..<headerSize]))
        }
    }

    /// Sets the flags and revision of a record begun with ``begin(_:flags:revision:)``.
    package static func setHeader(_ buffer: inout [UInt8], flags: UInt8, revision: UInt64) {
        guard buffer.count >= headerSize else { return }
        buffer.withUnsafeMutableBytes { b in
            b[1] = flags
            b.storeBytes(of: revision.littleEndian, toByteOffset: 2, as: UInt64.self)
        }
    }

    /// Fills in the checksum.
    package static func seal(_ buffer: inout [UInt8]) {
        guard buffer.count >= headerSize else { return }
        buffer.withUnsafeMutableBytes { all in
            guard let base = all.baseAddress else { return }
            all.storeBytes(of: CRC32C.record(base, count: all.count).littleEndian, toByteOffset: 10, as: UInt32.self)
        }
    }

    package enum Problem: Error { case tooShort, unknownVersion(UInt8), checksum, sealed }

    /// Checks a stored record and returns its header and payload.
    package static func open(_ bytes: UnsafeRawBufferPointer) throws(Problem) -> (Header, UnsafeRawBufferPointer) {
        if bytes.first == sealedMarker { throw .sealed }
        guard bytes.count >= headerSize else { throw .tooShort }
        guard bytes[0] == version else { throw .unknownVersion(bytes[0]) }
        guard let base = bytes.baseAddress, checksumMatches(base, bytes.count) else { throw .checksum }
        let payload = UnsafeRawBufferPointer(rebasing: bytes[headerSize...])
        let revision = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 2, as: UInt64.self))
        return (Header(flags: bytes[1], revision: revision), payload)
    }

    /// The payload of a sound record (known version, checksum matching), else nil (``open(_:)``
    /// then says what is wrong): the checks of every read, without a header or a typed error.
    @usableFromInline
    package static func soundPayload(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        guard bytes.count >= headerSize, let base = bytes.baseAddress, base.load(as: UInt8.self) == version,
              checksumMatches(base, bytes.count) else { return nil }
        return UnsafeRawBufferPointer(start: base + headerSize, count: bytes.count - headerSize)
    }

    /// Whether the stored CRC-32C of the `count`-byte record at `base` (at least a header)
    /// matches bytes 0..<10 and 14..<count.
    @inline(__always)
    private static func checksumMatches(_ base: UnsafeRawPointer, _ count: Int) -> Bool {
        let stored = UInt32(littleEndian: base.loadUnaligned(fromByteOffset: 10, as: UInt32.self))
        return CRC32C.record(base, count: count) == stored
    }

    /// The header without verifying the checksum (for revisions of records about to be replaced).
    package static func peekHeader(_ bytes: UnsafeRawBufferPointer) -> Header? {
        guard bytes.count >= headerSize, bytes[0] == version else { return nil }
        return Header(flags: bytes[1], revision: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 2, as: UInt64.self)))
    }
}
