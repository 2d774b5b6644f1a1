/// `Optional`, recognised at run time by generic code: the key/value kit's typed setter tells a
/// nil optional (delete the key) from a value, and the decoder reads an optional reference
/// through `Optional.init(from:)` (the reference is then resolved as the wrapped type).
package protocol OptionalValue {
    var isNone: Bool { get }
}

extension Optional: OptionalValue {
    package var isNone: Bool { self == nil }
}
