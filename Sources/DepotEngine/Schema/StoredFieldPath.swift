/// A stored field path (`address.zip`), split into its segments' UTF-8 bytes.
///
/// A class, so that a read passing the path worked out for a key path copies one reference;
/// `Sendable` because it is immutable.
@usableFromInline
package final class StoredFieldPath: Sendable {
    /// The path as written (`address.zip`).
    package let name: String
    /// Each segment's UTF-8 bytes.
    @usableFromInline package let segments: [[UInt8]]
    /// Whether the path names stored properties. A key path to a computed property, or to a
    /// protocol requirement formed in generic code (`\P.age` with `P` generic), describes
    /// itself as `<computed 0x… (Int)>`: no stored field to walk to.
    @usableFromInline package let isStored: Bool
    /// For a path of one segment of at most 7 bytes: its stored key (header byte and UTF-8) as a
    /// word in native byte order, the mask of the key's bytes and the key's stored length
    /// (`keyLength` 0 otherwise). The field is then found with one load and compare per entry.
    @usableFromInline package let keyWord: UInt64
    @usableFromInline package let keyMask: UInt64
    @usableFromInline package let keyLength: Int

    /// Splits `name` at its dots. `stored: false` marks a property whose value a read takes from
    /// elsewhere than the record's field (a ``Syncable``-like status kept in the record's flags).
    package init(_ name: String, stored: Bool = true) {
        self.name = name
        segments = name.split(separator: ".", omittingEmptySubsequences: false).map { Array($0.utf8) }
        isStored = stored && !name.isEmpty && !name.contains("<") && !name.contains(" ")
        var key: [UInt8] = [], mask: [UInt8] = []
        if segments.count == 1, let only = segments.first, !only.isEmpty, only.count + 1 <= 8 {
            key = [UInt8(only.count << 1)] + only
            mask = [UInt8](repeating: 0xFF, count: key.count)
        }
        keyLength = key.count
        key += [UInt8](repeating: 0, count: 8 - key.count)
        mask += [UInt8](repeating: 0, count: 8 - mask.count)
        keyWord = key.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
        keyMask = mask.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
    }
}

extension BinaryReader {
    /// The offset of the value at `path` below the value at `root`, or nil when the record lacks
    /// it: ``offset(ofPath:from:)-([[UInt8]],_)``, with the commonest case inline — a short
    /// top-level field of a small object (entry count and length of one byte each, short keys,
    /// values skipped inline).
    @inlinable
    package func offset(of path: StoredFieldPath, from root: Int) throws -> Int? {
        let length = path.keyLength
        if length > 0 && root >= 0 && root < count &- 3 && byte(root) == BinaryTag.object
            && byte(root &+ 1) < 0x80 && byte(root &+ 2) < 0x80 && Int(byte(root &+ 2)) <= count &- root &- 3 {
            var remaining = Int(byte(root &+ 1))
            var q = root &+ 3
            let end = q &+ Int(byte(root &+ 2))
            while remaining > 0 && q < end {
                let header = byte(q)
                guard header < 0x80 && header & 1 == 0 && Int(header >> 1) < end &- q else { break } // a long or integer key
                let keyEnd = q &+ 1 &+ Int(header >> 1)
                if keyEnd &- q == length {
                    let matches = q <= count &- 8
                        ? base.loadUnaligned(fromByteOffset: q, as: UInt64.self) & path.keyMask == path.keyWord
                        : withUnsafeBytes(of: path.keyWord) { w in w.baseAddress.map { Self.bytesEqual(base + q, $0, length) } ?? false }
                    if matches { return keyEnd }
                }
                q = try skipValueInline(at: keyEnd)
                remaining &-= 1
            }
            if remaining == 0 && q == end { return nil }
        }
        return try offset(ofPath: path.segments, from: root)
    }

    /// The offset of the value at `segments` below the value at `root`, or nil when a segment
    /// is missing. Only the containers on the path are entered; everything else is skipped.
    package func offset(ofPath segments: [Substring], from root: Int) throws -> Int? {
        try offset(ofPath: segments.map { Array($0.utf8) }, from: root)
    }

    /// The offset of the value at `segments` (UTF-8 bytes of each segment) below the value at `root`.
    @usableFromInline
    package func offset(ofPath segments: [[UInt8]], from root: Int) throws -> Int? {
        var p = root
        for wanted in segments {
            let t = try tag(at: p)
            var q = p + 1
            if t == BinaryTag.object {
                let (n, _) = try containerHeader(&q, minEntrySize: 2)
                var found: Int?
                // A short key is one header byte (its length, doubled) and its bytes: compared in place.
                let short = wanted.count < 64
                let header = UInt8(truncatingIfNeeded: wanted.count << 1)
                try wanted.withUnsafeBytes { w in
                    for _ in 0..<n {
                        if short && q < count && byte(q) == header && wanted.count <= count &- q &- 1 {
                            if wanted.isEmpty || w.baseAddress.map({ Self.bytesEqual(base + (q &+ 1), $0, wanted.count) }) == true {
                                found = q &+ 1 &+ wanted.count
                                return
                            }
                            q &+= 1 &+ wanted.count
                        } else if q < count && byte(q) < 0x80 && byte(q) & 1 == 0 && Int(byte(q) >> 1) <= count &- q &- 1 {
                            q &+= 1 &+ Int(byte(q) >> 1) // another short key
                        } else {
                            let matches: Bool
                            switch try key(&q) {
                            case .string(let start, let count):
                                matches = count == wanted.count && w.elementsEqual(UnsafeRawBufferPointer(start: base + start, count: count))
                            case .int(let value):
                                matches = Array(String(value).utf8) == wanted
                            }
                            if matches { found = q; return }
                        }
                        q = try skipValueInline(at: q)
                    }
                }
                guard let found else { return nil }
                p = found
            } else if t == BinaryTag.array, let index = Int(String(decoding: wanted, as: UTF8.self)), index >= 0 {
                let (n, _) = try containerHeader(&q, minEntrySize: 1)
                guard index < n else { return nil }
                for _ in 0..<index { q = try skipValue(at: q) }
                p = q
            } else {
                return nil
            }
        }
        return p
    }
}
