import Foundation

/// Encodes `Encodable` values into Depot's compact, self-describing binary format (version 1).
///
/// The output starts with one format-version byte followed by one tagged value. Containers carry
/// their element count and byte length so readers can skip them without parsing.
///
/// `BinaryEncoder` is a cheap value type; create one per use site. It is not `Sendable` because it
/// may hold a non-`Sendable` `referenceHook`.
public struct BinaryEncoder {
    /// Contextual information exposed to `Encodable` implementations through `Encoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: Any] = [:]
    /// Optional hook that can turn values below the root into references.
    @usableFromInline package var referenceHook: (any BinaryReferenceEncoding)?
    /// Initial capacity reserved by `encode(_:)` for the output buffer.
    public var initialCapacity: Int = 128
    /// Encoder state reused across calls while idle (a nested encode with the same encoder gets a fresh one).
    private let owner = Owner()
    private var cachedImpl: BinaryEncoderImpl { owner.impl }

    /// Owns the reused encoder, whose reused containers refer back to it: they are dropped when
    /// the last copy of this `BinaryEncoder` goes.
    private final class Owner {
        let impl = BinaryEncoderImpl()
        init() { impl.reusesContainers = true }
        deinit { impl.reused.removeAll() }
    }

    /// Creates an encoder with no reference hook.
    public init() {}

    /// A coder whose hook stays set between calls (the document layer's, whose hook is its
    /// transaction's own).
    package init(keepingHook: Bool) {
        cachedImpl.keepsHook = keepingHook
    }

    /// Encodes `value` into a new byte array.
    ///
    /// Inlinable, so that it is specialized where it is called.
    /// - Throws: `EncodingError` if a value cannot be encoded or containers are misused.
    @inlinable
    public func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(initialCapacity)
        try encode(value, into: &out, hook: referenceHook)
        return out
    }

    /// Appends the encoding of `value` (version byte + value) to `buffer`.
    /// On error, `buffer` is restored to its original length.
    public func encode<T: Encodable>(_ value: T, into buffer: inout [UInt8]) throws {
        try encode(value, into: &buffer, hook: referenceHook)
    }

    /// ``encode(_:into:)`` with `hook` as the reference hook (the document layer's encoder keeps
    /// its hook apart, so that the encoder is never copied).
    @usableFromInline
    package func encode<T: Encodable>(_ value: T, into buffer: inout [UInt8], hook: (any BinaryReferenceEncoding)?) throws {
        let originalCount = buffer.count
        let impl = cachedImpl.inUse ? BinaryEncoderImpl() : cachedImpl
        impl.begin(hook: hook, userInfo: userInfo)
        swap(&impl.buffer, &buffer)
        defer {
            swap(&impl.buffer, &buffer)
            impl.end()
        }
        do {
            try impl.encodeRoot(value)
        } catch {
            impl.buffer.removeSubrange(originalCount...)
            throw error
        }
    }

    /// Encodes `value` through its generated codec (``BinaryCodableDocument``): the same bytes
    /// as ``encode(_:)``, without keyed containers.
    /// - Throws: `EncodingError`, or what the reference hook throws.
    public func encodeGenerated<T: BinaryCodableDocument>(_ value: T) throws -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(initialCapacity)
        try encodeGenerated(value, into: &out)
        return out
    }

    /// Appends the encoding of `value` made by its generated code (version byte + value) to
    /// `buffer`; the same bytes as ``encode(_:into:)``. On error, `buffer` is restored.
    public func encodeGenerated<T: BinaryCodableDocument>(_ value: T, into buffer: inout [UInt8]) throws {
        try withRecordWriter(&buffer, hook: referenceHook) { try value.encodeBinary(into: &$0) }
    }

    /// Runs `body` with a writer of a record's top-level object appended to `buffer`. On error,
    /// `buffer` is restored to its original length.
    package func withRecordWriter(_ buffer: inout [UInt8], hook: (any BinaryReferenceEncoding)?,
                                  _ body: (inout BinaryRecordWriter) throws -> Void) throws {
        let originalCount = buffer.count
        let impl = cachedImpl.inUse ? BinaryEncoderImpl() : cachedImpl
        impl.begin(hook: hook, userInfo: userInfo)
        impl.nesting = 1 // the root object, as in the Codable path
        swap(&impl.buffer, &buffer)
        defer {
            swap(&impl.buffer, &buffer)
            impl.end()
        }
        do {
            impl.buffer.append(BinaryFormat.version)
            var writer = BinaryRecordWriter(impl: impl)
            try body(&writer)
            impl.closeFrames(downTo: 0)
            writer.finish()
            if let error = impl.deferredError { throw error }
        } catch {
            impl.buffer.removeSubrange(originalCount...)
            throw error
        }
    }

    /// Encodes `value` into `Data`.
    public func encodeData<T: Encodable>(_ value: T) throws -> Data {
        Data(try encode(value))
    }
}
