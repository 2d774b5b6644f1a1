import Foundation

extension DocumentValue {
    /// Parses JSON text (UTF-8). Integers stay `.int`/`.uint`, numbers with a fraction or exponent
    /// become `.double` (so `3.0` is a double and `3` an int), `true`/`false` become `.bool`.
    /// `{"$ref": {"collection": C, "id": ID}}` becomes `.reference`. Nesting is capped at 512. A
    /// UTF-8 byte-order mark before the text is ignored.
    ///
    /// Strict: a key repeated in one object, an integer beyond 64 bits and a number that would
    /// become infinity or 0 as a `Double` are refused with `BinaryCodecError.rejectedJSON`,
    /// naming the JSON path (never the value).
    /// - Throws: `BinaryCodecError.invalidJSON`, `.rejectedJSON` or `.nestingTooDeep`.
    ///
    /// - Parameter style: `.extended` also reads `{"$date": …}`, `{"$uuid": …}`, `{"$binary": …}`,
    ///   `{"$numberDouble": …}` and `{"$literal": {…}}` (see ``JSONStyle/extended``); `.plain`
    ///   (the default) reads them as the objects they are.
    public init(json: Data, style: JSONStyle = .plain) throws {
        self = try json.withUnsafeBytes { raw in
            var parser = JSONParser(raw.bindMemory(to: UInt8.self))
            parser.extended = style == .extended
            return try parser.parseDocument()
        }
    }

    /// Parses one line of `depot export` output, `{"collection": C, "id": ID, "document": {…}}`,
    /// as ``init(json:style:)`` does, except that the line's own object does not count towards the
    /// nesting cap: the deepest document the store takes (512 levels) parses inside it.
    ///
    /// - Parameter style: `.extended` (the default: what `depot export` writes) reads typed
    ///   values (`{"$date": …}`); a line without them reads the same in both styles.
    public init(exportedLine json: Data, style: JSONStyle = .extended) throws {
        self = try json.withUnsafeBytes { raw in
            var parser = JSONParser(raw.bindMemory(to: UInt8.self))
            parser.enclosingLevels = 1
            parser.extended = style == .extended
            return try parser.parseDocument()
        }
    }

    /// Parses JSON text (see ``init(json:style:)``).
    public init(jsonString: String, style: JSONStyle = .plain) throws {
        try self.init(json: Data(jsonString.utf8), style: style)
    }

    /// Writes compact JSON. References are `{"$ref": {"collection": C, "id": ID}}`; dates,
    /// UUIDs, bytes and non-finite numbers as `style` says:
    ///
    /// - `.plain` (the default): dates as ISO-8601 strings, UUIDs their string form, bytes
    ///   base64. Never fails on stored data: a non-finite `Double` (which JSON cannot hold;
    ///   records written before the strict reader, or by Swift code, may contain one) is written
    ///   as the string `"NaN"`, `"Infinity"` or `"-Infinity"`. Read back, these are strings.
    /// - `.extended`: `{"$date": …}`, `{"$uuid": …}`, `{"$binary": …}`, `{"$numberDouble": …}`,
    ///   and an object that would read as one of them inside `{"$literal": …}`: read back with
    ///   the same style, the same value (``JSONStyle/extended``).
    /// - Parameters:
    ///   - sortedKeys: Sort object keys by their UTF-8 bytes instead of keeping field order.
    ///   - style: How typed values are written.
    public func jsonData(sortedKeys: Bool = false, style: JSONStyle = .plain) throws -> Data {
        var w = JSONWriter(sortedKeys: sortedKeys, style: style)
        try w.write(self)
        return Data(w.out)
    }

    /// Compact JSON as a `String` (see ``jsonData(sortedKeys:style:)``).
    public func jsonString(sortedKeys: Bool = false, style: JSONStyle = .plain) throws -> String {
        var w = JSONWriter(sortedKeys: sortedKeys, style: style)
        try w.write(self)
        return String(decoding: w.out, as: UTF8.self)
    }

    /// Formats a date as ISO-8601 in UTC, with fractional seconds only when needed: the fewest
    /// digits (3 to 17) that ``parseISO8601(_:)`` reads back as exactly this date, so that a date
    /// survives export and import unchanged (milliseconds alone lost the rest of a `Date`). A
    /// date that is not a point in time (a non-finite interval, which Swift code or an old
    /// record may hold) is `"NaN"`, `"Infinity"` or `"-Infinity"`, as a non-finite number is.
    static func formatISO8601(_ date: Date) -> String {
        let t = date.timeIntervalSinceReferenceDate
        if let word = nonFiniteWord(t) { return word }
        let whole = t.rounded(.down)
        let seconds = Date.ISO8601FormatStyle(includingFractionalSeconds: false, timeZone: .gmt)
        if whole == t { return seconds.format(date) }
        let fraction = t - whole
        var scale = 100.0
        for digits in 3...17 {
            scale *= 10
            let units = (fraction * scale).rounded()
            guard units < scale, whole + units / scale == t else { continue }
            var text = seconds.format(Date(timeIntervalSinceReferenceDate: whole))
            guard text.last == "Z" else { break }
            text.removeLast()
            let number = String(Int(units))
            return text + "." + String(repeating: "0", count: digits - number.count) + number + "Z"
        }
        // No decimal fraction of 17 digits is this date exactly (a date within a fraction of a
        // second of 2001): the nearest millisecond.
        return Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt).format(date)
    }

    /// `"NaN"`, `"Infinity"` or `"-Infinity"` for a non-finite number, nil for a finite one.
    static func nonFiniteWord(_ number: Double) -> String? {
        if number.isFinite { return nil }
        return number.isNaN ? "NaN" : (number < 0 ? "-Infinity" : "Infinity")
    }

    /// Parses an ISO-8601 date with or without fractional seconds (up to 18 digits all read: the
    /// whole seconds, then the fraction added, as ``formatISO8601(_:)`` expects; more digits are
    /// left to Foundation's parser).
    static func parseISO8601(_ s: String) -> Date? {
        // The fraction of `…THH:MM:SS.fff` followed by nothing, `Z` or an offset (`+01:00`).
        if let dot = s.firstIndex(of: "."), let t = s.firstIndex(of: "T"), t < dot,
           s[..<dot].suffix(3).first == ":", s[..<dot].suffix(2).allSatisfy({ $0.isASCII && $0.isNumber }) {
            let digits = s[s.index(after: dot)...].prefix { $0.isASCII && $0.isNumber }
            let rest = s[digits.endIndex...]
            let zone = rest.isEmpty || rest == "Z"
                || ((rest.first == "+" || rest.first == "-") && rest.dropFirst().allSatisfy { ($0.isASCII && $0.isNumber) || $0 == ":" })
            if zone, !digits.isEmpty, digits.count <= 18, let units = Int64(digits),
               let whole = try? Date.ISO8601FormatStyle().parse(String(s[..<dot]) + String(rest)) {
                var scale = 1.0
                for _ in 0..<digits.count { scale *= 10 }
                return Date(timeIntervalSinceReferenceDate: whole.timeIntervalSinceReferenceDate + Double(units) / scale)
            }
        }
        if let d = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(s) { return d }
        return try? Date.ISO8601FormatStyle().parse(s)
    }
}

/// Compact JSON serializer for `DocumentValue`.
struct JSONWriter {
    var out: [UInt8] = []
    let sortedKeys: Bool
    /// Whether typed values are written as ``JSONStyle/extended``'s one-key objects.
    let extended: Bool

    init(sortedKeys: Bool, style: JSONStyle = .plain) {
        self.sortedKeys = sortedKeys
        self.extended = style == .extended
        out.reserveCapacity(256)
    }

    mutating func raw(_ s: String) { out.append(contentsOf: s.utf8) }

    mutating func write(_ v: DocumentValue) throws {
        switch v {
        case .null: raw("null")
        case .bool(let b): raw(b ? "true" : "false")
        case .int(let i): raw(String(i))
        case .uint(let u): raw(String(u))
        case .double(let d):
            if d.isFinite {
                raw(d.description)
            } else {
                typed(ExtendedJSON.numberDouble, DocumentValue.nonFiniteWord(d) ?? "NaN")
            }
        case .string(let s): string(s)
        case .bytes(let b):
            if extended {
                raw("{\"$binary\":{\"base64\":")
                string(Data(b).base64EncodedString())
                raw(",\"subType\":\"00\"}}")
            } else {
                string(Data(b).base64EncodedString())
            }
        case .date(let d): typed(ExtendedJSON.date, DocumentValue.formatISO8601(d))
        case .uuid(let u): typed(ExtendedJSON.uuid, u.uuidString)
        case .object(let fields) where extended && ExtendedJSON.needsLiteral(fields):
            // Read back as it is, not as the typed value (or reference) its key names.
            raw("{\"$literal\":")
            try writeFields(fields)
            raw("}")
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                try write(item)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let fields):
            try writeFields(fields)
        case .reference(let collection, let id):
            raw("{\"$ref\":{\"collection\":")
            string(collection)
            raw(",\"id\":")
            try write(id)
            raw("}}")
        }
    }

    /// `{"key": "text"}` in the extended style, else `"text"`.
    private mutating func typed(_ key: String, _ text: String) {
        if extended {
            raw("{")
            string(key)
            raw(":")
            string(text)
            raw("}")
        } else {
            string(text)
        }
    }

    /// An object's fields, `{"key": value, …}`.
    private mutating func writeFields(_ fields: [DocumentValue.Field]) throws {
        let ordered = sortedKeys
            ? fields.sorted { DocumentValue.compareUTF8($0.key, $1.key) == .orderedAscending } : fields
        out.append(UInt8(ascii: "{"))
        for (i, f) in ordered.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            string(f.key)
            out.append(UInt8(ascii: ":"))
            try write(f.value)
        }
        out.append(UInt8(ascii: "}"))
    }

    package mutating func string(_ s: String) {
        out.append(UInt8(ascii: "\""))
        for c in s.utf8 {
            switch c {
            case UInt8(ascii: "\""): raw("\\\"")
            case UInt8(ascii: "\\"): raw("\\\\")
            case 0x0A: raw("\\n")
            case 0x0D: raw("\\r")
            case 0x09: raw("\\t")
            case 0x08: raw("\\b")
            case 0x0C: raw("\\f")
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                raw("\\u00")
                out.append(hex[Int(c >> 4)])
                out.append(hex[Int(c & 0xF)])
            default: out.append(c)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
