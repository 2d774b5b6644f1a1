import Foundation

/// A value that can be indexed and compared in queries: strings, numbers, booleans, UUIDs,
/// dates, and optionals of them.
public protocol IndexableValue {
    /// The value as a scalar document value.
    var indexValue: DocumentValue { get }
}

extension String: IndexableValue { public var indexValue: DocumentValue { .string(self) } }
extension Bool: IndexableValue { public var indexValue: DocumentValue { .bool(self) } }
extension Double: IndexableValue { public var indexValue: DocumentValue { .double(self) } }
extension Float: IndexableValue { public var indexValue: DocumentValue { .double(Double(self)) } }
extension UUID: IndexableValue { public var indexValue: DocumentValue { .uuid(self) } }
extension Date: IndexableValue { public var indexValue: DocumentValue { .date(self) } }
extension Int: IndexableValue { public var indexValue: DocumentValue { .int(Int64(self)) } }
extension Int8: IndexableValue { public var indexValue: DocumentValue { .int(Int64(self)) } }
extension Int16: IndexableValue { public var indexValue: DocumentValue { .int(Int64(self)) } }
extension Int32: IndexableValue { public var indexValue: DocumentValue { .int(Int64(self)) } }
extension Int64: IndexableValue { public var indexValue: DocumentValue { .int(self) } }
extension UInt: IndexableValue { public var indexValue: DocumentValue { .uint(UInt64(self)) } }
extension UInt8: IndexableValue { public var indexValue: DocumentValue { .uint(UInt64(self)) } }
extension UInt16: IndexableValue { public var indexValue: DocumentValue { .uint(UInt64(self)) } }
extension UInt32: IndexableValue { public var indexValue: DocumentValue { .uint(UInt64(self)) } }
extension UInt64: IndexableValue { public var indexValue: DocumentValue { .uint(self) } }
extension Optional: IndexableValue where Wrapped: IndexableValue {
    public var indexValue: DocumentValue { self?.indexValue ?? .null }
}
