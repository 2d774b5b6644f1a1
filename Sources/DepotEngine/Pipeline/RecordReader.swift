/// The read pipeline's engine half: one way to open a stored record — envelope and checksum,
/// then the payload, as bytes for a typed decode or as a ``DocumentValue`` — and one mapping of
/// what goes wrong to ``DepotError``, naming the alias, collection and ID (never a stored value).
///
/// DepotCore's typed reads decode the payload with the document's codec (a sound record on their
/// direct path, through ``Record/soundPayload(_:)``) and report a failed decode through
/// ``failure(_:alias:collection:kind:key:)``; index builds open records with
/// ``open(_:alias:collection:key:kind:)``, every schemaless read with
/// ``document(_:alias:collection:key:kind:)``.
package enum RecordReader {
    /// Checks a stored record's envelope and checksum: its header and payload. Errors name
    /// alias, collection and ID.
    package static func open(_ bytes: UnsafeRawBufferPointer, alias: String, collection: String, key: UnsafeRawBufferPointer,
                             kind: IDKind) throws -> (header: Record.Header, payload: UnsafeRawBufferPointer) {
        do {
            return try Record.open(bytes)
        } catch .checksum {
            throw DepotError.checksumMismatch(alias: alias, collection: collection, id: displayIDOfKey(key, kind: kind))
        } catch .sealed {
            throw DepotError.transformRequired(alias: alias, collection: collection, id: displayIDOfKey(key, kind: kind))
        } catch {
            throw DepotError.corruptRecord(alias: alias, collection: collection, id: displayIDOfKey(key, kind: kind), detail: "\(error)")
        }
    }

    /// Opens the stored record `bytes` under `key` and reads its document as a schemaless value;
    /// a damaged record is reported as ``open(_:alias:collection:key:kind:)`` and
    /// ``failure(_:alias:collection:kind:key:)`` report it.
    package static func document(_ bytes: UnsafeRawBufferPointer, alias: String, collection: String, key: UnsafeRawBufferPointer,
                                 kind: IDKind) throws -> (header: Record.Header, document: DocumentValue) {
        let (header, payload) = try open(bytes, alias: alias, collection: collection, key: key, kind: kind)
        do {
            return (header, try DocumentValue(binary: payload))
        } catch {
            throw failure(error, alias: alias, collection: collection, kind: kind, key: key)
        }
    }

    /// The error a failed decode of the record under `key` reports: decoding and format errors
    /// name the alias, collection, ID (and field path); any other error passes unchanged.
    package static func failure(_ error: any Error, alias: String, collection: String, kind: IDKind,
                                key: UnsafeRawBufferPointer) -> any Error {
        switch error {
        case let error as DecodingError:
            return DepotError.decodingFailed(alias: alias, collection: collection, id: displayIDOfKey(key, kind: kind),
                                             fieldPath: error.fieldPath, detail: decodingDetail(error))
        case let error as BinaryCodecError:
            return DepotError.corruptRecord(alias: alias, collection: collection, id: displayIDOfKey(key, kind: kind), detail: "\(error)")
        case let error as DepotError where error.code == .unknownReferenceType && error.alias == nil:
            // From the reference hook, via the decoder, which added the field path.
            return error.locatingReference(alias: alias, collection: collection, id: displayIDOfKey(key, kind: kind),
                                           fieldPath: error.fieldPath ?? "")
        default:
            return error
        }
    }
}
