/// Which keys a scan visits: everything, a range (half-open or closed, bounded on either side),
/// or the keys that start with a prefix. Bounds are compared as the database compares keys.
///
/// ```swift
/// try txn.forEach(in: db, range: .halfOpen("a", "m")) { key, value in … }
/// try txn.forEach(in: db, range: "a"..."m") { … }      // Comparable keys: Swift ranges work
/// try txn.forEach(in: db, range: .prefix("user/"), reverse: true) { … }
/// ```
@frozen
public struct KeyRange<Key> {
    /// A range end: the key and whether it is included.
    public struct Bound {
        /// The key at this end.
        public var key: Key
        /// Whether the key itself is in the range.
        public var inclusive: Bool
        /// Creates a range end.
        public init(key: Key, inclusive: Bool) {
            self.key = key
            self.inclusive = inclusive
        }
    }

    /// The lower end, or nil for no lower limit.
    public var lower: Bound?
    /// The upper end, or nil for no upper limit.
    public var upper: Bound?
    /// When set, only keys whose encoded bytes start with this key's encoded bytes.
    public var prefix: Key?

    /// Creates a range from its parts.
    public init(lower: Bound? = nil, upper: Bound? = nil, prefix: Key? = nil) {
        self.lower = lower
        self.upper = upper
        self.prefix = prefix
    }

    /// Every key.
    public static var all: KeyRange { KeyRange() }
    /// Keys from `lower` (included) up to `upper` (excluded).
    public static func halfOpen(_ lower: Key, _ upper: Key) -> KeyRange {
        KeyRange(lower: Bound(key: lower, inclusive: true), upper: Bound(key: upper, inclusive: false))
    }
    /// Keys from `lower` to `upper`, both included.
    public static func closed(_ lower: Key, _ upper: Key) -> KeyRange {
        KeyRange(lower: Bound(key: lower, inclusive: true), upper: Bound(key: upper, inclusive: true))
    }
    /// Keys from `lower` (included) on.
    public static func from(_ lower: Key) -> KeyRange { KeyRange(lower: Bound(key: lower, inclusive: true)) }
    /// Keys after `lower` (excluded).
    public static func after(_ lower: Key) -> KeyRange { KeyRange(lower: Bound(key: lower, inclusive: false)) }
    /// Keys below `upper` (excluded).
    public static func below(_ upper: Key) -> KeyRange { KeyRange(upper: Bound(key: upper, inclusive: false)) }
    /// Keys up to `upper` (included).
    public static func through(_ upper: Key) -> KeyRange { KeyRange(upper: Bound(key: upper, inclusive: true)) }
    /// Keys whose bytes start with the bytes of `prefix`.
    public static func prefix(_ prefix: Key) -> KeyRange { KeyRange(prefix: prefix) }
}

extension KeyRange where Key: Comparable {
    /// The keys of a half-open Swift range.
    public init(_ range: Range<Key>) { self = .halfOpen(range.lowerBound, range.upperBound) }
    /// The keys of a closed Swift range.
    public init(_ range: ClosedRange<Key>) { self = .closed(range.lowerBound, range.upperBound) }
    /// The keys of `a...`.
    public init(_ range: PartialRangeFrom<Key>) { self = .from(range.lowerBound) }
    /// The keys of `..<b`.
    public init(_ range: PartialRangeUpTo<Key>) { self = .below(range.upperBound) }
    /// The keys of `...b`.
    public init(_ range: PartialRangeThrough<Key>) { self = .through(range.upperBound) }
}
