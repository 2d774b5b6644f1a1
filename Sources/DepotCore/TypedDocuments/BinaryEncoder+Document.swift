extension BinaryEncoder {
    /// Appends the encoding of a document whose type has a generated codec, dispatched to the
    /// type's own (specialized) code. On error, `buffer` is restored to its original length.
    @usableFromInline
    func encodeDocument<D: Document>(_ document: D, into buffer: inout [UInt8], hook: (any BinaryReferenceEncoding)?) throws {
        try withRecordWriter(&buffer, hook: hook) { try document._encodeGenerated(into: &$0) }
    }
}
