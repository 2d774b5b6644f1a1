import Foundation

extension DocumentValue {
    /// Orders two values for queries.
    ///
    /// Numbers (`.int`, `.uint`, `.double`) compare numerically across kinds, exactly; strings compare
    /// by UTF-8 bytes (equivalently by Unicode scalars); bytes and UUIDs lexicographically; dates by
    /// time; booleans `false < true`; arrays element-wise then by length; references by collection, then id;
    /// `.null` equals `.null`.
    /// - Returns: nil when the values are incomparable (different kinds, objects, or NaN).
    public static func compare(_ a: DocumentValue, _ b: DocumentValue) -> ComparisonResult? {
        switch (a, b) {
        case (.null, .null): return .orderedSame
        case let (.bool(x), .bool(y)): return order(x ? 1 : 0, y ? 1 : 0)
        case let (.int(x), .int(y)): return order(x, y)
        case let (.uint(x), .uint(y)): return order(x, y)
        case let (.double(x), .double(y)):
            if x.isNaN || y.isNaN { return nil }
            return x < y ? .orderedAscending : (x > y ? .orderedDescending : .orderedSame)
        case let (.int(x), .uint(y)): return x < 0 ? .orderedAscending : order(UInt64(x), y)
        case let (.uint(x), .int(y)): return y < 0 ? .orderedDescending : order(x, UInt64(y))
        case let (.int(x), .double(y)): return compare(x, y)
        case let (.double(x), .int(y)): return compare(y, x).map(flip)
        case let (.uint(x), .double(y)): return compare(x, y)
        case let (.double(x), .uint(y)): return compare(y, x).map(flip)
        case let (.string(x), .string(y)): return compareUTF8(x, y)
        case let (.bytes(x), .bytes(y)): return compareBytes(x, y)
        case let (.date(x), .date(y)):
            return order(x.timeIntervalSinceReferenceDate, y.timeIntervalSinceReferenceDate)
        case let (.uuid(x), .uuid(y)):
            return withUnsafeBytes(of: x.uuid) { xb in
                withUnsafeBytes(of: y.uuid) { yb in compareBytes(Array(xb), Array(yb)) }
            }
        case let (.array(x), .array(y)):
            for (l, r) in zip(x, y) {
                guard let c = compare(l, r) else { return nil }
                if c != .orderedSame { return c }
            }
            return order(x.count, y.count)
        case let (.reference(c1, id1), .reference(c2, id2)):
            let c = compareUTF8(c1, c2)
            return c != .orderedSame ? c : compare(id1, id2)
        default:
            return nil
        }
    }

    private static func order<T: Comparable>(_ x: T, _ y: T) -> ComparisonResult {
        x < y ? .orderedAscending : (x > y ? .orderedDescending : .orderedSame)
    }

    private static func flip(_ c: ComparisonResult) -> ComparisonResult {
        switch c {
        case .orderedAscending: return .orderedDescending
        case .orderedDescending: return .orderedAscending
        case .orderedSame: return .orderedSame
        }
    }

    /// Exact comparison of an Int64 with a Double.
    private static func compare(_ i: Int64, _ d: Double) -> ComparisonResult? {
        if d.isNaN { return nil }
        if d >= 9223372036854775808.0 { return .orderedAscending }
        if d < -9223372036854775808.0 { return .orderedDescending }
        let t = d.rounded(.towardZero)
        let ti = Int64(t)
        if i != ti { return order(i, ti) }
        let frac = d - t
        return frac > 0 ? .orderedAscending : (frac < 0 ? .orderedDescending : .orderedSame)
    }

    /// Exact comparison of a UInt64 with a Double.
    private static func compare(_ u: UInt64, _ d: Double) -> ComparisonResult? {
        if d.isNaN { return nil }
        if d < 0 { return .orderedDescending }
        if d >= 18446744073709551616.0 { return .orderedAscending }
        let t = d.rounded(.towardZero)
        let tu = UInt64(t)
        if u != tu { return order(u, tu) }
        return d > t ? .orderedAscending : .orderedSame
    }

    static func compareUTF8(_ a: String, _ b: String) -> ComparisonResult {
        var a = a, b = b
        return a.withUTF8 { pa in
            b.withUTF8 { pb in compareBuffers(UnsafeRawBufferPointer(pa), UnsafeRawBufferPointer(pb)) }
        }
    }

    private static func compareBytes(_ a: [UInt8], _ b: [UInt8]) -> ComparisonResult {
        a.withUnsafeBytes { pa in b.withUnsafeBytes { pb in compareBuffers(pa, pb) } }
    }

    private static func compareBuffers(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> ComparisonResult {
        let n = min(a.count, b.count)
        if n > 0 {
            let r = memcmp(a.baseAddress!, b.baseAddress!, n)
            if r != 0 { return r < 0 ? .orderedAscending : .orderedDescending }
        }
        return order(a.count, b.count)
    }
}
