import Foundation

/// A type usable as a document identifier: `String`, fixed-width integers, `UUID`.
public protocol DocumentID: Hashable, Sendable, Codable {
    /// How the key bytes are laid out.
    static var idKind: IDKind { get }
    /// Calls `body` with the key bytes of this ID.
    func withKeyBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R
    /// Reads an ID back from key bytes.
    init(keyBytes: UnsafeRawBufferPointer) throws
    /// The ID as a scalar document value (for references, exports and change sets).
    var documentValue: DocumentValue { get }
    /// Reads an ID from a scalar document value; nil if it does not fit.
    init?(documentValue: DocumentValue)
}

extension DocumentID {
    /// The key bytes as an array.
    public var keyBytes: [UInt8] { withKeyBytes { [UInt8]($0) } }
}

extension String: DocumentID {
    public static var idKind: IDKind { .string }
    @inlinable
    public func withKeyBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try StringCodec.withBytes(of: self, body)
    }
    public init(keyBytes: UnsafeRawBufferPointer) throws { self = String(decoding: keyBytes, as: UTF8.self) }
    public var documentValue: DocumentValue { .string(self) }
    public init?(documentValue: DocumentValue) {
        guard case .string(let s) = documentValue else { return nil }
        self = s
    }
}

extension UUID: DocumentID {
    public static var idKind: IDKind { .uuid }
    @inlinable
    public func withKeyBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try UUIDCodec.withBytes(of: self, body)
    }
    public init(keyBytes: UnsafeRawBufferPointer) throws { self = try UUIDCodec.decode(keyBytes) }
    public var documentValue: DocumentValue { .uuid(self) }
    public init?(documentValue: DocumentValue) {
        switch documentValue {
        case .uuid(let u): self = u
        case .string(let s): guard let u = UUID(uuidString: s) else { return nil }; self = u
        default: return nil
        }
    }
}

/// Integer IDs are widened to 8 bytes so that every integer type sorts numerically: a
/// conforming type is at most 64 bits wide (a document type whose ID is wider is refused with
/// ``DepotError/Code/invalidKey``).
public protocol IntegerDocumentID: DocumentID, FixedWidthInteger {}

extension IntegerDocumentID {
    public static var idKind: IDKind { Self.isSigned ? .signed : .unsigned }
    @inlinable
    public func withKeyBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        if Self.isSigned {
            return try BigEndian<Int64>.withBytes(of: Int64(self), body)
        }
        return try BigEndian<UInt64>.withBytes(of: UInt64(self), body)
    }
    public init(keyBytes: UnsafeRawBufferPointer) throws {
        if Self.isSigned {
            let wide = try BigEndian<Int64>.decode(keyBytes)
            guard let v = Self(exactly: wide) else { throw DepotError.invalidKey(detail: "integer ID \(wide) does not fit \(Self.self)") }
            self = v
        } else {
            let wide = try BigEndian<UInt64>.decode(keyBytes)
            guard let v = Self(exactly: wide) else { throw DepotError.invalidKey(detail: "integer ID \(wide) does not fit \(Self.self)") }
            self = v
        }
    }
    public var documentValue: DocumentValue { Self.isSigned ? .int(Int64(self)) : .uint(UInt64(self)) }
    public init?(documentValue: DocumentValue) {
        switch documentValue {
        case .int(let i): guard let v = Self(exactly: i) else { return nil }; self = v
        case .uint(let u): guard let v = Self(exactly: u) else { return nil }; self = v
        default: return nil
        }
    }
}

extension Int: IntegerDocumentID {}
extension Int8: IntegerDocumentID {}
extension Int16: IntegerDocumentID {}
extension Int32: IntegerDocumentID {}
extension Int64: IntegerDocumentID {}
extension UInt: IntegerDocumentID {}
extension UInt8: IntegerDocumentID {}
extension UInt16: IntegerDocumentID {}
extension UInt32: IntegerDocumentID {}
extension UInt64: IntegerDocumentID {}

extension IDKind {
    /// How a message names the document stored under `key`: its ID when `key` is a key of
    /// this kind (UTF-8 text without NUL for string IDs, 8 bytes for integers, 16 for UUIDs, 32
    /// for content hashes), else only its size. A key of another shape comes from a damaged node, and its
    /// bytes may run into a stored value, which a message must never show.
    package func display(key: UnsafeRawBufferPointer) -> String {
        let fits: Bool
        switch self {
        case .string:
            // Any text but NUL: a record's bytes (what a damaged node's key runs into) hold NULs,
            // a string ID hardly ever does.
            fits = !key.isEmpty && key.count <= 511 && !key.contains(0) && validUTF8String(key) != nil
        case .signed, .unsigned: fits = key.count == 8
        case .uuid: fits = key.count == 16
        case .content: fits = key.count == 32
        }
        guard fits else {
            // A string ID may hold NUL (Swift code can park one): it is named by size as well,
            // and the message says it may be that rather than damage.
            let what = self == .string ? "a damaged entry, or an ID holding NUL (named by its size only)" : "a damaged entry"
            return "(a key of \(key.count) bytes that is no \(rawValue) ID: \(what))"
        }
        return displayID(value(ofKey: key))
    }

    /// Renders key bytes of this kind as a document value (for export and change sets).
    package func value(ofKey key: UnsafeRawBufferPointer) -> DocumentValue {
        switch self {
        case .string: return .string(String(decoding: key, as: UTF8.self))
        case .signed: return (try? BigEndian<Int64>.decode(key)).map { .int($0) } ?? .bytes([UInt8](key))
        case .unsigned: return (try? BigEndian<UInt64>.decode(key)).map { .uint($0) } ?? .bytes([UInt8](key))
        case .uuid: return (try? UUIDCodec.decode(key)).map { .uuid($0) } ?? .bytes([UInt8](key))
        case .content: return .string(key.map { String(format: "%02x", $0) }.joined())
        }
    }

    /// Key bytes for a scalar document value of this kind; nil if it does not fit.
    package func key(for value: DocumentValue) -> [UInt8]? {
        switch (self, value) {
        case (.string, .string(let s)): return Array(s.utf8)
        case (.signed, .int(let i)): return i.keyBytes
        case (.signed, .uint(let u)): return Int64(exactly: u)?.keyBytes
        case (.unsigned, .uint(let u)): return u.keyBytes
        case (.unsigned, .int(let i)): return UInt64(exactly: i)?.keyBytes
        case (.uuid, .uuid(let u)): return u.keyBytes
        case (.uuid, .string(let s)): return UUID(uuidString: s)?.keyBytes
        case (.content, .string(let hex)):
            guard hex.count == 64 else { return nil }
            var bytes: [UInt8] = []
            var index = hex.startIndex
            while index < hex.endIndex {
                let next = hex.index(index, offsetBy: 2)
                guard let b = UInt8(hex[index..<next], radix: 16) else { return nil }
                bytes.append(b)
                index = next
            }
            return bytes
        default: return nil
        }
    }
}
