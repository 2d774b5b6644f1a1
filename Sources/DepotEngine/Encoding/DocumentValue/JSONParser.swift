import Foundation

/// The one strict RFC 8259 JSON reader of Depot (seeds, `depot kv set`, `depot query` values,
/// `DocumentValue(json:)`), producing `DocumentValue`s.
///
/// Beyond the grammar it refuses, naming the JSON path, whatever cannot be stored exactly:
/// - a key repeated in one object (RFC 8259 leaves the meaning open; Depot refuses);
/// - an integer (no fraction, no exponent) outside `Int64.min...UInt64.max`: the document model
///   holds 64-bit integers, so a wider one is an error rather than a rounded double;
/// - a number with a fraction or exponent beyond `Double`'s range (it would become infinity),
///   or non-zero but so small that it would become 0.
///
/// Integers become `.int` (or `.uint` above `Int64.max`); numbers with a fraction or exponent
/// become `.double`, rounded to the nearest `Double` as every JSON reader does.
package struct JSONParser {
    package let base: UnsafePointer<UInt8>
    let count: Int
    var p = 0
    /// The path of the value being read, for messages: keys and array indexes.
    var path: [PathComponent] = []
    /// Levels above the document that do not count towards ``BinaryFormat/maxDepth`` (the
    /// object of a `depot export` line around its document).
    var enclosingLevels = 0
    /// Only the grammar is checked: what would be refused beyond it (a repeated key, a number
    /// past Depot's types) is read on (numbers as null). See ``isWellFormed(_:)``.
    var grammarOnly = false
    /// Read ``JSONStyle/extended``'s one-key objects (`{"$date": …}`, `{"$literal": {…}}`) as the
    /// values they stand for; off, only `{"$ref": …}` is read so.
    var extended = false
    /// The next object is the one inside `{"$literal": …}`: read as it is, however its keys look.
    private var literalNext = false

    package enum PathComponent { case key(String), index(Int) }

    init(_ buffer: UnsafeBufferPointer<UInt8>) {
        base = buffer.baseAddress ?? UnsafePointer(bitPattern: 0x10)!
        count = buffer.count
    }

    func error(_ reason: String) -> BinaryCodecError { .invalidJSON(offset: p, reason: reason) }

    /// A refusal of well-formed JSON at the current path.
    func rejected(_ reason: String, at offset: Int) -> BinaryCodecError {
        .rejectedJSON(offset: offset, path: Self.describe(path), reason: reason)
    }

    /// `path` and its member `key`: `$.a.name`, `$.a["odd key"]` (see ``describe(_:)``).
    package static func member(_ path: String, _ key: String) -> String {
        path + describe([.key(key)]).dropFirst()
    }

    /// `$`, `$.name`, `$.list[2]`, `$["odd key"]`: the one spelling of a JSON path in Depot's
    /// messages (parse errors, seeding, `depot import`).
    package static func describe(_ path: [PathComponent]) -> String {
        var text = "$"
        for component in path {
            switch component {
            case .index(let i): text += "[\(i)]"
            case .key(let k):
                let plain = !k.isEmpty && k.utf8.allSatisfy { c in
                    (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x5F || c == 0x24 || c == 0x2D
                }
                if plain { text += "." + k } else {
                    var w = JSONWriter(sortedKeys: false)
                    w.string(k)
                    text += "[" + String(decoding: w.out, as: UTF8.self) + "]"
                }
            }
        }
        return text
    }

    /// Whether `text` is JSON by RFC 8259's grammar, whatever of it Depot could not store (a
    /// repeated key, a number past its types): tells text that is no JSON from JSON that
    /// ``DocumentValue/init(json:)`` refuses. Text nested past Depot's cap counts as JSON (it is
    /// not read further: the reader recurses).
    package static func isWellFormed(_ text: String) -> Bool {
        Data(text.utf8).withUnsafeBytes { raw in
            var parser = JSONParser(raw.bindMemory(to: UInt8.self))
            parser.grammarOnly = true
            do {
                _ = try parser.parseDocument()
                return true
            } catch let error as BinaryCodecError {
                if case .nestingTooDeep = error { return true }
                return false
            } catch {
                return false
            }
        }
    }

    mutating func parseDocument() throws -> DocumentValue {
        // A UTF-8 byte-order mark before the text is ignored, as RFC 8259 allows (editors add it).
        if count >= 3 && base[0] == 0xEF && base[1] == 0xBB && base[2] == 0xBF { p = 3 }
        skipWhitespace()
        let v = try value(depth: 0)
        skipWhitespace()
        guard p == count else { throw error("unexpected trailing characters") }
        return v
    }

    mutating func skipWhitespace() {
        while p < count {
            let c = base[p]
            guard c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 else { return }
            p += 1
        }
    }

    mutating func expect(_ literal: StaticString, _ v: DocumentValue) throws -> DocumentValue {
        let n = literal.utf8CodeUnitCount
        guard count - p >= n, memcmp(base + p, literal.utf8Start, n) == 0 else { throw error("invalid literal") }
        p += n
        return v
    }

    mutating func value(depth: Int) throws -> DocumentValue {
        guard depth < BinaryFormat.maxDepth + enclosingLevels else { throw BinaryCodecError.nestingTooDeep(limit: BinaryFormat.maxDepth) }
        guard p < count else { throw error("unexpected end of input") }
        switch base[p] {
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try expect("true", .bool(true))
        case UInt8(ascii: "f"): return try expect("false", .bool(false))
        case UInt8(ascii: "n"): return try expect("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw error("unexpected character")
        }
    }

    package mutating func array(depth: Int) throws -> DocumentValue {
        literalNext = false // `{"$literal": [{…}]}`: the array's objects are read as usual
        p += 1
        var items: [DocumentValue] = []
        skipWhitespace()
        if p < count && base[p] == UInt8(ascii: "]") { p += 1; return .array(items) }
        while true {
            skipWhitespace()
            path.append(.index(items.count))
            items.append(try value(depth: depth + 1))
            path.removeLast()
            skipWhitespace()
            guard p < count else { throw error("unterminated array") }
            let c = base[p]
            p += 1
            if c == UInt8(ascii: "]") { return .array(items) }
            guard c == UInt8(ascii: ",") else { p -= 1; throw error("expected , or ]") }
        }
    }

    /// Whether the value at `p` is followed by the end of its object (it is the object's last),
    /// found by reading it for its grammar only; `p` is left where it was.
    private mutating func valueEndsObject(depth: Int) throws -> Bool {
        let start = p, wasGrammarOnly = grammarOnly, wasLiteral = literalNext
        defer {
            p = start
            grammarOnly = wasGrammarOnly
            literalNext = wasLiteral
        }
        grammarOnly = true
        literalNext = true // as the literal it may be: nothing at its own level is a typed value
        _ = try value(depth: depth)
        skipWhitespace()
        return p < count && base[p] == UInt8(ascii: "}")
    }

    package mutating func object(depth: Int) throws -> DocumentValue {
        let objectStart = p
        let literal = literalNext
        literalNext = false
        p += 1
        var fields: [DocumentValue.Field] = []
        var keys = Set<String>()
        skipWhitespace()
        if p < count && base[p] == UInt8(ascii: "}") { p += 1; return .object(fields) }
        while true {
            skipWhitespace()
            guard p < count, base[p] == UInt8(ascii: "\"") else { throw error("expected object key") }
            let keyOffset = p
            let key = try string()
            // Small objects: a linear scan is cheaper than hashing every key. Keys are compared as
            // JSON does, by their characters' code points ("é" and "e\u{301}" are two keys), not by
            // Swift's canonical equivalence: a set's hit is confirmed byte for byte.
            let sameKey = { (field: DocumentValue.Field) in field.key.utf8.elementsEqual(key.utf8) }
            let repeated = fields.count < 16 ? fields.contains(where: sameKey) : !keys.insert(key).inserted && fields.contains(where: sameKey)
            if fields.count == 15 { keys = Set(fields.map(\.key)); keys.insert(key) }
            if repeated && !grammarOnly {
                path.append(.key(key))
                defer { path.removeLast() }
                throw rejected("the key appears more than once in its object", at: keyOffset)
            }
            skipWhitespace()
            guard p < count, base[p] == UInt8(ascii: ":") else { throw error("expected :") }
            p += 1
            skipWhitespace()
            path.append(.key(key))
            // A typed value's inner levels are no levels of the document (checked below when the
            // object is no typed value after all).
            let discount = extended && !literal && fields.isEmpty ? ExtendedJSON.innerLevels(key) : 0
            literalNext = extended && !literal && fields.isEmpty && key == ExtendedJSON.literal
            // "$literal" makes a literal only as an object's only key: looked ahead for.
            if literalNext { literalNext = try valueEndsObject(depth: depth + 1 - discount) }
            fields.append(DocumentValue.Field(key, try value(depth: depth + 1 - discount)))
            literalNext = false
            path.removeLast()
            skipWhitespace()
            guard p < count else { throw error("unterminated object") }
            let c = base[p]
            p += 1
            if c == UInt8(ascii: "}") { break }
            guard c == UInt8(ascii: ",") else { p -= 1; throw error("expected , or }") }
        }
        if literal || fields.count != 1 {
            if extended && !literal, let first = fields.first, ExtendedJSON.innerLevels(first.key) > 0,
               depth + ExtendedJSON.height(first.value) >= BinaryFormat.maxDepth + enclosingLevels {
                throw BinaryCodecError.nestingTooDeep(limit: BinaryFormat.maxDepth)
            }
            return .object(fields)
        }
        if extended, let typed = try typedValue(fields[0], at: objectStart) { return typed }
        // {"$ref": {"collection": C, "id": ID}} is the JSON form of a reference.
        if fields[0].key == ExtendedJSON.reference, case .object(let inner) = fields[0].value, inner.count == 2,
           let c = inner.first(where: { $0.key == "collection" })?.value.stringValue,
           let id = inner.first(where: { $0.key == "id" })?.value {
            switch id {
            case .string, .int, .uint, .uuid: return .reference(collection: c, id: id)
            default: break
            }
        }
        return .object(fields)
    }

    /// The value of an extended-JSON one-key object (`{"$date": …}`; the object of
    /// `{"$literal": {…}}`), nil for another object; a malformed one is refused at its path.
    private func typedValue(_ field: DocumentValue.Field, at offset: Int) throws -> DocumentValue? {
        if field.key == ExtendedJSON.literal {
            guard case .object = field.value else {
                if grammarOnly { return .null }
                throw rejected("\"$literal\" must hold an object (written so, an object whose only key begins with $ is read as it is)", at: offset)
            }
            return field.value
        }
        switch ExtendedJSON.typedValue(key: field.key, value: field.value) {
        case .success(let value)?: return value
        case .failure(let malformed)?: if grammarOnly { return .null } else { throw rejected(malformed.reason, at: offset) }
        case nil: return nil
        }
    }

    package mutating func string() throws -> String {
        p += 1
        let start = p
        while p < count {
            let c = base[p]
            if c == UInt8(ascii: "\"") {
                let s = try make(UnsafeBufferPointer(start: base + start, count: p - start))
                p += 1
                return s
            }
            if c == UInt8(ascii: "\\") || c < 0x20 { break }
            p += 1
        }
        var bytes = [UInt8](UnsafeBufferPointer(start: base + start, count: p - start))
        while p < count {
            let c = base[p]
            if c == UInt8(ascii: "\"") {
                p += 1
                return try bytes.withUnsafeBufferPointer { try make($0) }
            }
            guard c >= 0x20 else { throw error("control character in string") }
            if c != UInt8(ascii: "\\") {
                bytes.append(c)
                p += 1
                continue
            }
            guard p + 1 < count else { break }
            let e = base[p + 1]
            p += 2
            switch e {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): bytes.append(e)
            case UInt8(ascii: "b"): bytes.append(0x08)
            case UInt8(ascii: "f"): bytes.append(0x0C)
            case UInt8(ascii: "n"): bytes.append(0x0A)
            case UInt8(ascii: "r"): bytes.append(0x0D)
            case UInt8(ascii: "t"): bytes.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800...0xDBFF).contains(scalar) {
                    guard p + 1 < count, base[p] == UInt8(ascii: "\\"), base[p + 1] == UInt8(ascii: "u") else {
                        throw error("unpaired surrogate")
                    }
                    p += 2
                    let low = try hex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw error("invalid surrogate pair") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    throw error("unpaired surrogate")
                }
                guard let u = Unicode.Scalar(scalar) else { throw error("invalid unicode escape") }
                bytes.append(contentsOf: UTF8.encode(u)!)
            default:
                throw error("invalid escape")
            }
        }
        throw error("unterminated string")
    }

    func make(_ buf: UnsafeBufferPointer<UInt8>) throws -> String {
        var s = String(decoding: buf, as: UTF8.self)
        let n = buf.count
        let valid = s.withUTF8 { u in u.count == n && (n == 0 || memcmp(u.baseAddress!, buf.baseAddress!, n) == 0) }
        guard valid else { throw error("invalid UTF-8") }
        return s
    }

    mutating func hex4() throws -> UInt32 {
        guard count - p >= 4 else { throw error("truncated unicode escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = base[p]
            let d: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = c - UInt8(ascii: "A") + 10
            default: throw error("invalid hex digit")
            }
            v = v << 4 | UInt32(d)
            p += 1
        }
        return v
    }

    mutating func digits() -> Int {
        let s = p
        while p < count, base[p] >= UInt8(ascii: "0"), base[p] <= UInt8(ascii: "9") { p += 1 }
        return p - s
    }

    mutating func number() throws -> DocumentValue {
        let start = p
        let negative = base[p] == UInt8(ascii: "-")
        if negative { p += 1 }
        let intStart = p
        let n = digits()
        guard n > 0 else { throw error("invalid number") }
        guard !(n > 1 && base[intStart] == UInt8(ascii: "0")) else { throw error("leading zero in number") }
        var isInteger = true
        if p < count && base[p] == UInt8(ascii: ".") {
            p += 1
            guard digits() > 0 else { throw error("invalid fraction") }
            isInteger = false
        }
        if p < count && (base[p] == UInt8(ascii: "e") || base[p] == UInt8(ascii: "E")) {
            p += 1
            if p < count && (base[p] == UInt8(ascii: "+") || base[p] == UInt8(ascii: "-")) { p += 1 }
            guard digits() > 0 else { throw error("invalid exponent") }
            isInteger = false
        }
        let digitsStart = intStart
        if isInteger {
            var magnitude: UInt64 = 0
            var overflow = false
            for i in intStart..<p {
                let (m1, o1) = magnitude.multipliedReportingOverflow(by: 10)
                let (m2, o2) = m1.addingReportingOverflow(UInt64(base[i] - UInt8(ascii: "0")))
                magnitude = m2
                if o1 || o2 { overflow = true; break }
            }
            if !overflow {
                if !negative {
                    if let v = Int64(exactly: magnitude) { return .int(v) }
                    return .uint(magnitude)
                }
                if magnitude <= UInt64(Int64.max) { return .int(-Int64(magnitude)) }
                if magnitude == UInt64(Int64.max) + 1 { return .int(Int64.min) }
            }
            if grammarOnly { return .null }
            throw rejected("the integer does not fit in 64 bits (Int64.min...UInt64.max), the widest Depot stores; write it as a string", at: start)
        }
        let text = String(decoding: UnsafeBufferPointer(start: base + start, count: p - start), as: UTF8.self)
        guard let d = Double(text) else { throw error("invalid number") }
        if grammarOnly { return .double(d) }
        if !d.isFinite {
            throw rejected("the number is beyond the range of a Double (it would become infinity)", at: start)
        }
        if d == 0 {
            // Non-zero digits in the mantissa (before the exponent) that still gave 0: underflow.
            var i = digitsStart
            while i < p, base[i] != UInt8(ascii: "e"), base[i] != UInt8(ascii: "E") {
                if base[i] >= UInt8(ascii: "1") && base[i] <= UInt8(ascii: "9") {
                    throw rejected("the number is too small for a Double (it would become 0)", at: start)
                }
                i += 1
            }
        }
        return .double(d)
    }
}
