import Foundation

/// An index's field path (`email`, `address.zip`, `tags.2`, `items[0].name`), parsed once, and
/// the index key of the value it names read straight from a stored payload's bytes.
///
/// The key is the one `IndexKeyEncoding.encode(document[path: field] ?? .null)` gives for the
/// payload's `DocumentValue` (the same steps as `DocumentValue.subscript(path:)`), without
/// building the document: only the containers on the path are entered, everything else is
/// skipped by its stored length, and a scalar value is encoded from its bytes.
package struct IndexFieldPath: Hashable, Sendable {
    /// One step of a path.
    package enum Step: Hashable, Sendable {
        /// A dotted segment: an object's field named `utf8` (`name`), or, in an array, the
        /// element at `index` when the segment is a number.
        case name(utf8: [UInt8], name: String, index: Int?, ascii: Bool)
        /// A bracketed number (`[2]`): an array's element.
        case element(Int)
        /// A path that names nothing (an empty segment, a malformed bracket).
        case nothing
    }

    package let steps: [Step]
    /// A field name: its UTF-8 and its text.
    package struct Name: Hashable, Sendable {
        package let utf8: [UInt8]
        package let string: String
    }

    /// The segments when every step is an ASCII, non-numeric name (`email`, `address.zip`):
    /// walked through objects only, without the general steps.
    package let names: [Name]?

    /// Parses `field` as `DocumentValue.subscript(path:)` reads it.
    package init(_ field: String) {
        steps = Self.parse(field)
        var names: [Name] = []
        for step in steps {
            guard case .name(let utf8, let string, nil, true) = step else {
                self.names = nil
                return
            }
            names.append(Name(utf8: utf8, string: string))
        }
        self.names = names
    }

    /// The value this path names in `document`, as `document[path: field]` finds it, without
    /// parsing the path again (a query reads one path from every document); nil when a step
    /// finds nothing.
    package func value(in document: DocumentValue) -> DocumentValue? {
        var current = document
        for step in steps {
            let next: DocumentValue?
            switch step {
            case .nothing:
                return nil
            case .name(_, let name, let index, _):
                if case .array = current, let index { next = current[index] } else { next = current[name] }
            case .element(let i):
                next = current[i]
            }
            guard let next else { return nil }
            current = next
        }
        return current
    }

    private static func parse(_ field: String) -> [Step] {
        var steps: [Step] = []
        for segment in field.split(separator: ".", omittingEmptySubsequences: false) {
            var rest = Substring(segment)
            let name = rest.prefix { $0 != "[" }
            rest = rest.dropFirst(name.count)
            if !name.isEmpty {
                let utf8 = Array(name.utf8)
                steps.append(.name(utf8: utf8, name: String(name), index: Int(name), ascii: utf8.allSatisfy { $0 < 0x80 }))
            } else if rest.isEmpty {
                return [.nothing]
            }
            while !rest.isEmpty {
                guard rest.first == "[", let close = rest.firstIndex(of: "]"),
                      let i = Int(rest[rest.index(after: rest.startIndex)..<close])
                else {
                    return [.nothing]
                }
                steps.append(.element(i))
                rest = rest[rest.index(after: close)...]
            }
        }
        return steps
    }

    /// The offset of the value this path names below the value at `root`, or nil when a step
    /// finds nothing.
    package func offset(in reader: BinaryReader, from root: Int) throws -> Int? {
        if let names { return try Self.offset(of: names, in: reader, from: root) }
        var p = root
        for step in steps {
            let t = try reader.tag(at: p)
            switch step {
            case .nothing:
                return nil
            case .element(let i):
                guard t == BinaryTag.array, let q = try Self.element(i, of: reader, at: p) else { return nil }
                p = q
            case .name(let utf8, let name, let index, let ascii):
                if t == BinaryTag.array {
                    guard let index, let q = try Self.element(index, of: reader, at: p) else { return nil }
                    p = q
                } else if t == BinaryTag.object {
                    guard let q = try Self.field(utf8, name: name, ascii: ascii, of: reader, at: p) else { return nil }
                    p = q
                } else {
                    return nil
                }
            }
        }
        return p
    }

    /// The offset of the value at the ASCII field names `names` below the object at `root`.
    private static func offset(of names: [Name], in reader: BinaryReader, from root: Int) throws -> Int? {
        var p = root
        for name in names {
            guard try reader.tag(at: p) == BinaryTag.object,
                  let q = try field(name.utf8, name: name.string, ascii: true, of: reader, at: p) else { return nil }
            p = q
        }
        return p
    }

    /// The offset of element `i` of the array at `p`, or nil when out of range.
    private static func element(_ i: Int, of reader: BinaryReader, at p: Int) throws -> Int? {
        var q = p + 1
        let (n, _) = try reader.containerHeader(&q, minEntrySize: 1)
        guard i >= 0, i < n else { return nil }
        for _ in 0..<i { q = try reader.skipValueInline(at: q) }
        return q
    }

    /// The offset of the first value of the object at `p` whose key is `name` (compared as
    /// strings are, where bytes alone cannot tell), or nil.
    private static func field(_ utf8: [UInt8], name: String, ascii: Bool, of reader: BinaryReader, at p: Int) throws -> Int? {
        var q = p + 1
        let (n, _) = try reader.containerHeader(&q, minEntrySize: 2)
        for _ in 0..<n {
            let matches: Bool
            switch try reader.key(&q) {
            case .string(let start, let count):
                if count == utf8.count, utf8.withUnsafeBytes({ w in
                    count == 0 || w.baseAddress.map { BinaryReader.bytesEqual($0, reader.base + start, count) } == true
                }) {
                    matches = true
                } else if !ascii || !BinaryReader.isASCII(reader.base + start, count) {
                    // Unequal bytes may still be equal strings (canonical equivalence).
                    matches = try reader.makeString(start, count) == name
                } else {
                    matches = false
                }
            case .int(let value):
                matches = String(value) == name
            }
            if matches { return q }
            q = try reader.skipValueInline(at: q)
        }
        return nil
    }
}

extension IndexKeyEncoding {
    /// The index key of the value at `path` in `payload` (a stored document's binary
    /// encoding, version byte first): `nullKey` when the path names nothing.
    package static func encode(stored payload: UnsafeRawBufferPointer, path: IndexFieldPath) throws -> [UInt8] {
        let reader = BinaryReader(payload)
        let root = try BinaryReader.checkHeader(reader)
        guard let p = try path.offset(in: reader, from: root) else { return nullKey }
        var out: [UInt8] = []
        try appendStored(reader, at: p, to: &out)
        finish(&out)
        return out
    }

    /// Appends the key of the stored value at `p`: scalars from their bytes, anything else
    /// through its `DocumentValue`.
    package static func appendStored(_ reader: BinaryReader, at p: Int, to out: inout [UInt8]) throws {
        var q = p + 1
        switch try reader.tag(at: p) {
        case BinaryTag.null: out.append(0x00)
        case BinaryTag.falseValue: out.append(boolTag); out.append(0x00)
        case BinaryTag.trueValue: out.append(boolTag); out.append(0x01)
        case BinaryTag.int: append(.int(BinaryWriter.unzigzag(try reader.varint(&q))), to: &out)
        case BinaryTag.uint: append(.uint(try reader.varint(&q)), to: &out)
        case BinaryTag.double: append(.double(Double(bitPattern: try reader.fixed64(&q))), to: &out)
        case BinaryTag.string, BinaryTag.url, BinaryTag.decimal:
            let n = try reader.length(&q)
            // Stored text must be valid UTF-8, as when the document is read.
            if !BinaryReader.isASCII(reader.base + q, n) { _ = try reader.makeString(q, n) }
            out.reserveCapacity(out.count + n + 3)
            out.append(0x20)
            appendEscaped(UnsafeRawBufferPointer(start: reader.base + q, count: n), to: &out)
            out.append(0x00)
            out.append(0x00)
        default:
            var r = p
            append(try reader.documentValue(&r, depth: 0), to: &out)
        }
    }
}
