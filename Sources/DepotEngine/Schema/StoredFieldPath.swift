/// A stored field path (`address.zip`), split into its segments' UTF-8 bytes.
@usableFromInline
package struct StoredFieldPath {
    /// The path as written (`address.zip`).
    package let name: String
    /// Each segment's UTF-8 bytes.
    package let segments: [[UInt8]]
    /// Whether the path names stored properties. A key path to a computed property, or to a
    /// protocol requirement formed in generic code (`\P.age` with `P` generic), describes
    /// itself as `<computed 0x… (Int)>`: no stored field to walk to.
    @usableFromInline package let isStored: Bool

    /// Splits `name` at its dots.
    package init(_ name: String) {
        self.name = name
        segments = name.split(separator: ".", omittingEmptySubsequences: false).map { Array($0.utf8) }
        isStored = !name.isEmpty && !name.contains("<") && !name.contains(" ")
    }
}

extension BinaryReader {
    /// The offset of the value at `segments` below the value at `root`, or nil when a segment
    /// is missing. Only the containers on the path are entered; everything else is skipped.
    package func offset(ofPath segments: [Substring], from root: Int) throws -> Int? {
        try offset(ofPath: segments.map { Array($0.utf8) }, from: root)
    }

    /// The offset of the value at `segments` (UTF-8 bytes of each segment) below the value at `root`.
    package func offset(ofPath segments: [[UInt8]], from root: Int) throws -> Int? {
        var p = root
        for wanted in segments {
            let t = try tag(at: p)
            var q = p + 1
            if t == BinaryTag.object {
                let (n, _) = try containerHeader(&q, minEntrySize: 2)
                var found: Int?
                for _ in 0..<n {
                    let matches: Bool
                    switch try key(&q) {
                    case .string(let start, let count):
                        matches = count == wanted.count && wanted.withUnsafeBytes { w in
                            w.elementsEqual(UnsafeRawBufferPointer(start: base + start, count: count))
                        }
                    case .int(let value):
                        matches = Array(String(value).utf8) == wanted
                    }
                    if matches { found = q; break }
                    q = try skipValue(at: q)
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
