extension BinaryDecoder {
    /// Decodes a document whose type has a generated codec, dispatched to the type's own
    /// (specialized) code: no existential, no copy of the value.
    ///
    /// Inlinable, so that it is specialized for `D` where the document layer calls it: the
    /// record is opened and closed by non-generic code and `D`'s generated initializer is called
    /// directly (no closure, no generic metadata between the read and the fields).
    ///
    /// `known` is a string the caller holds and `knownUTF8` its UTF-8 bytes (the ID the document
    /// is retrieved by and its key): a string field with those bytes shares the caller's string.
    @inlinable
    func decodeDocument<D: Document>(_: D.Type, from bytes: UnsafeRawBufferPointer,
                                     resolver: (any BinaryReferenceDecoding)?,
                                     known: String? = nil, knownUTF8: UnsafeRawBufferPointer = .init(start: nil, count: 0)) throws -> D {
        var record = try openRecord(bytes, D.self, resolver: resolver)
        if let known { record.share(known, bytes: knownUTF8) }
        defer { record.close() }
        let value = try D._decodeGenerated(from: &record)
        try record.finishRoot()
        return value
    }
}
