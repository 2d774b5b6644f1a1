import Foundation

/// Decodes `Decodable` values from Depot's binary format (version 1).
///
/// Decoding reads directly from the input bytes without copying them. Any byte sequence either
/// decodes or throws: truncated or malformed input throws `BinaryCodecError`, an unknown version byte
/// throws `BinaryCodecError.unsupportedVersion`, and type mismatches, missing keys or out-of-range
/// numbers throw `DecodingError` with the `codingPath` of the offending value.
///
/// Not `Sendable` because it may hold a non-`Sendable` `referenceResolver`; create one per use site.
public struct BinaryDecoder {
    /// Contextual information exposed to `Decodable` implementations through `Decoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: Any] = [:]
    /// Optional resolver for REFERENCE tags. Without one, meeting a reference while decoding
    /// anything but `DocumentValue` throws `DecodingError.typeMismatch`.
    @usableFromInline package var referenceResolver: (any BinaryReferenceDecoding)?
    /// Decoder state reused across calls while idle (a nested decode with the same decoder gets a fresh one).
    private let owner = Owner()
    /// The decoder this one reuses while it is idle (a busy one, during a nested decode, gets a
    /// fresh one).
    private var cachedImpl: BinaryDecoderImpl { owner.impl }

    /// Owns the reused decoder; the containers it keeps are dropped when the last copy of this
    /// `BinaryDecoder` goes (they hold the decoder unretained, see ``DecoderLifeCell``).
    private final class Owner {
        let impl = BinaryDecoderImpl()
        init() { impl.reusesContainers = true }
        deinit { impl.reused.removeAll() }
    }

    /// Creates a decoder with no reference resolver.
    public init() {}

    /// A coder whose resolver stays set between calls (the document layer's, whose resolver is its
    /// transaction's own).
    package init(keepingResolver: Bool) {
        cachedImpl.keepsResolver = keepingResolver
    }

    /// Decodes a value of type `T` from `bytes`. The whole input must be consumed.
    public func decode<T: Decodable>(_ type: T.Type, from bytes: UnsafeRawBufferPointer) throws -> T {
        try decode(type, from: bytes, resolver: referenceResolver)
    }

    /// ``decode(_:from:)-(_,UnsafeRawBufferPointer)`` with `resolver` resolving references (the
    /// document layer's decoder keeps its resolver apart, so that the decoder is never copied).
    package func decode<T: Decodable>(_ type: T.Type, from bytes: UnsafeRawBufferPointer,
                              resolver: (any BinaryReferenceDecoding)?) throws -> T {
        try decodePlainDocument(T.self, from: bytes, resolver: resolver)
    }

    /// ``decode(_:from:resolver:)`` of a document read by its ID: `known` is a string the
    /// caller holds and `knownUTF8` its UTF-8 bytes (the ID and its key): a string field with
    /// those bytes shares the caller's string (as ``decodeDocument(_:from:resolver:known:knownUTF8:)``).
    @usableFromInline
    package func decodePlainDocument<T: Decodable>(_ type: T.Type, from bytes: UnsafeRawBufferPointer,
                                           resolver: (any BinaryReferenceDecoding)?, known: String? = nil,
                                           knownUTF8: UnsafeRawBufferPointer = .init(start: nil, count: 0)) throws -> T {
        let reader = BinaryReader(bytes)
        let p = try BinaryReader.checkHeader(reader)
        // Two calls rather than one reference that is either: the kept decoder is then borrowed
        // from `owner`, not retained for the call.
        let kept = owner.impl
        if kept.inUse { return try decode(T.self, reader, at: p, on: BinaryDecoderImpl(), resolver: resolver, known, knownUTF8) }
        return try decode(T.self, reader, at: p, on: kept, resolver: resolver, known, knownUTF8)
    }

    /// Decodes the root value at `p` of `reader` with `impl` (idle).
    @inline(__always)
    private func decode<T: Decodable>(_: T.Type, _ reader: BinaryReader, at start: Int, on impl: BinaryDecoderImpl,
                                      resolver: (any BinaryReferenceDecoding)?, _ known: String?,
                                      _ knownUTF8: UnsafeRawBufferPointer) throws -> T {
        var p = start
        impl.begin(reader: reader, resolver: resolver, userInfo: userInfo, offset: p)
        if let known { impl.share(known, bytes: knownUTF8) }
        defer { impl.end() }
        let value = try impl.decodeRoot(T.self, &p)
        guard p == reader.count else {
            throw BinaryCodecError.malformed(offset: p, reason: "trailing bytes after the root value")
        }
        return value
    }

    /// Decodes a value of type `T` through its generated codec (``BinaryCodableDocument``): reads
    /// what ``decode(_:from:)-(_,UnsafeRawBufferPointer)`` reads, without keyed containers.
    ///
    /// Inlinable, so that `T`'s generated initializer is called directly where this is specialized.
    @inlinable
    public func decodeGenerated<T: BinaryCodableDocument>(_ type: T.Type, from bytes: UnsafeRawBufferPointer) throws -> T {
        var record = try openRecord(bytes, T.self, resolver: referenceResolver)
        defer { record.close() }
        let value = try T(binaryRecord: &record)
        try record.finishRoot()
        return value
    }

    /// Decodes a value of type `T` from a byte array through its generated codec.
    @inlinable
    public func decodeGenerated<T: BinaryCodableDocument>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        try bytes.withUnsafeBytes { try decodeGenerated(T.self, from: $0) }
    }

    /// Decodes a `T` (a `codec`, by construction) with its generated code.
    package func decode<T>(_: T.Type, from bytes: UnsafeRawBufferPointer, generatedBy codec: any BinaryCodableDocument.Type,
                   resolver: (any BinaryReferenceDecoding)?) throws -> T {
        try withRecordReader(bytes, T.self, resolver: resolver) { try codec.decodeRecord(T.self, from: &$0) }
    }

    /// A reader of the record's top-level object, its decoder state begun (end it with
    /// ``BinaryRecordReader/close()``; check the end with ``BinaryRecordReader/finishRoot()``).
    @usableFromInline
    package func openRecord(_ bytes: UnsafeRawBufferPointer, _ type: Any.Type, resolver: (any BinaryReferenceDecoding)?) throws
        -> BinaryRecordReader {
        let reader = BinaryReader(bytes)
        let p = try BinaryReader.checkHeader(reader)
        let impl = cachedImpl.inUse ? BinaryDecoderImpl() : cachedImpl
        impl.begin(reader: reader, resolver: resolver, offset: p)
        if !userInfo.isEmpty || !impl.userInfo.isEmpty { impl.userInfo = userInfo }
        impl.nesting = 1 // the root object, as in the Codable path
        do {
            return try BinaryRecordReader(impl: impl, at: p, decoding: type)
        } catch {
            impl.end()
            throw error
        }
    }

    /// Decodes the value at `offset` of `bytes` (a field found by a projection); references are
    /// resolved by `resolver`.
    @usableFromInline
    package func decodeValue<T: Decodable>(_: T.Type, from bytes: UnsafeRawBufferPointer, at offset: Int,
                                   resolver: (any BinaryReferenceDecoding)?) throws -> T {
        let impl = cachedImpl.inUse ? BinaryDecoderImpl() : cachedImpl
        impl.begin(reader: BinaryReader(bytes), resolver: resolver, userInfo: userInfo, offset: offset)
        defer { impl.end() }
        var p = offset
        return try impl.decodeValue(T.self, &p, 0, NoKey(), advance: true)
    }

    /// Runs `body` with a reader of the record's top-level object; checks that it ends the input.
    private func withRecordReader<T>(_ bytes: UnsafeRawBufferPointer, _: T.Type, resolver: (any BinaryReferenceDecoding)?,
                                     _ body: (inout BinaryRecordReader) throws -> T) throws -> T {
        var record = try openRecord(bytes, T.self, resolver: resolver)
        defer { record.close() }
        let value = try body(&record)
        try record.finishRoot()
        return value
    }

    /// Decodes a value of type `T` from a byte array.
    ///
    /// Inlinable, so that the closure over the bytes is specialized where it is called.
    @inlinable
    public func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        try bytes.withUnsafeBytes { try decodePlainDocument(T.self, from: $0, resolver: referenceResolver) }
    }

    /// Decodes a value of type `T` from `Data`.
    public func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        try data.withUnsafeBytes { try decode(type, from: $0) }
    }
}
