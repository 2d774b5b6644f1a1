import Foundation

/// The keyed look-up: where the value of a key is among an object's entries.
extension BinaryDecoderImpl {
    /// Finds the value for `key` among `count` entries in `[entries, end)`, scanning linearly from
    /// just after the last match at this depth and wrapping around once.
    ///
    /// Inlined where a container looks a key up: records are written in declaration order, so
    /// the key asked for is usually the entry at the hint, compared here in place; any other
    /// case goes to ``scan(_:entries:end:count:depth:from:index:)``.
    @inline(__always)
    func find<K: CodingKey>(_ key: K, entries: Int, end: Int, count: Int, depth: Int) throws -> Int? {
        if count == 0 { return nil }
        var pos = entries
        var idx = 0
        let h = depth == 0 ? hint0 : hint(at: depth)
        if h.owner == entries && h.index < count && h.offset < end {
            pos = h.offset
            idx = h.index
        }
        let r = reader
        let h0 = r.byte(pos)
        if h0 < 0x80, h0 & 1 == 0, pos + 1 + Int(h0 >> 1) <= end {
            let len = Int(h0 >> 1)
            let stored = r.base + pos + 1
            var name = key.stringValue
            let same = name.utf8.count == len && name.withUTF8 { (kb: UnsafeBufferPointer<UInt8>) -> Bool in
                guard let k = kb.baseAddress else { return len == 0 }
                return BinaryReader.bytesEqual(UnsafeRawPointer(k), stored, len)
            }
            if same {
                let q = pos + 1 + len
                let next = try r.skipValueInline(at: q)
                guard next <= end else { throw BinaryCodecError.malformed(offset: q, reason: "value exceeds its object") }
                let found = KeyHint(owner: entries, offset: next, index: idx + 1)
                if depth == 0 { hint0 = found } else { remember(found, depth: depth) }
                return q
            }
        }
        return try scan(key, entries: entries, end: end, count: count, depth: depth, from: pos, index: idx)
    }

    /// The look-up hint of `depth` (1...).
    private func hint(at depth: Int) -> KeyHint {
        depth <= hints.count ? hints[depth - 1] : KeyHint(owner: -1, offset: 0, index: 0)
    }

    /// ``find(_:entries:end:count:depth:)`` past its fast case: the entries from `pos` (entry
    /// `idx`) on, wrapping around once.
    private func scan<K: CodingKey>(_ key: K, entries: Int, end: Int, count: Int, depth: Int,
                                    from start: Int, index: Int) throws -> Int? {
        var pos = start
        var idx = index
        var name = key.stringValue
        let r = reader
        let found: (value: Int, next: Int, index: Int)? = try name.withUTF8 { kb in
            var scanned = 0
            while scanned < count {
                if idx == count {
                    idx = 0
                    pos = entries
                }
                var q = pos
                let h = try r.varint(&q)
                var match = false
                if h & 1 == 0 {
                    let n = h >> 1
                    guard q <= end, n <= UInt64(end - q) else {
                        throw BinaryCodecError.malformed(offset: q, reason: "key exceeds its object")
                    }
                    let len = Int(n)
                    if len == kb.count && (len == 0 || memcmp(r.base + q, kb.baseAddress!, len) == 0) {
                        match = true
                    }
                    q += len
                } else {
                    guard h == 1 else { throw BinaryCodecError.malformed(offset: q, reason: "invalid key header") }
                    let v = BinaryWriter.unzigzag(try r.varint(&q))
                    if let i = key.intValue { match = Int64(i) == v } else { match = key.stringValue == String(v) }
                }
                let next = try r.skipValueInline(at: q)
                guard next <= end else { throw BinaryCodecError.malformed(offset: q, reason: "value exceeds its object") }
                idx += 1
                scanned += 1
                if match { return (q, next, idx) }
                pos = next
            }
            return nil
        }
        guard let found else { return nil }
        remember(KeyHint(owner: entries, offset: found.next, index: found.index), depth: depth)
        return found.value
    }

    /// Keeps where the lookup at `depth` stopped, for the next one.
    private func remember(_ hint: KeyHint, depth: Int) {
        if depth == 0 {
            hint0 = hint
        } else if depth <= hints.count {
            hints[depth - 1] = hint
        } else {
            while hints.count < depth - 1 { hints.append(KeyHint(owner: -1, offset: 0, index: 0)) }
            hints.append(hint)
        }
    }
}
