#if Crypto
import Crypto
import DepotCore
import Foundation

/// Encrypts every document and key/value record of a store with AES-256-GCM (GarageStorage's
/// data-encryption delegate, ready made).
///
/// ```swift
/// var options = StoreOptions()
/// options.recordTransform = try AESGCMTransform(keys: [1: key], current: 1)
/// let store = try Store(path: "./data", options: options)
/// ```
///
/// Each record is sealed with a fresh 96-bit nonce and authenticated together with its keyspace
/// and key, so a record copied under another ID does not open. The sealed form (which the store
/// keeps after its marker byte, so that tools without the key tell it from damage) is
/// `01 | key ID | nonce (12) | ciphertext | tag (16)`: records name the key that sealed them, so
/// keys can be rotated — add the new key, make it `current`, and old records still open (they are
/// re-sealed with the current key when next written). A wrong or missing key is a
/// ``DepotError`` with code `.transformFailed` naming the collection and ID; keys never appear in
/// errors, logs or descriptions. What stays readable without a key: IDs, collection names, sync
/// statuses, and the store's meta records; secondary indexes are refused (their keys would hold
/// field values in clear).
///
/// Two transforms are equal when they hold the same keys under the same IDs and seal with the
/// same current key: a second handle on a store open in the process must give an equal one.
public struct AESGCMTransform: RecordTransform, CustomStringConvertible, Equatable {
    /// Key material by ID, kept as bytes (`SymmetricKey` is not `Sendable`; a transform crosses
    /// threads with its store).
    private let keys: [UInt8: [UInt8]]
    /// The ID of the key new records are sealed with.
    public let current: UInt8

    /// What went wrong, without secrets.
    public enum Failure: Error, Sendable, Equatable, LocalizedError {
        /// A key is not 256 bits.
        case keySize(id: UInt8, bits: Int)
        /// `current` names no key.
        case unknownCurrentKey(UInt8)
        /// A record was sealed with a key ID that is not configured.
        case unknownKey(UInt8)
        /// Not a record sealed by this transform (too short, or another format).
        case malformed
        /// Authentication failed: the wrong key, or the record was changed.
        case authentication

        /// What went wrong, with key IDs only (never key material).
        public var errorDescription: String? {
            switch self {
            case .keySize(let id, let bits): return "AES-GCM key \(id) has \(bits) bits; keys must have 256"
            case .unknownCurrentKey(let id): return "AES-GCM: the current key ID \(id) names no configured key"
            case .unknownKey(let id): return "AES-GCM: the record was sealed with key ID \(id), which is not configured"
            case .malformed: return "AES-GCM: not a record sealed by this transform (too short, or another format)"
            case .authentication: return "AES-GCM: authentication failed (the wrong key, or the record was changed)"
            }
        }
    }

    /// A transform with `keys` by ID (each 256 bits) that seals with `current`.
    public init(keys: [UInt8: SymmetricKey], current: UInt8) throws {
        for (id, key) in keys where key.bitCount != 256 { throw Failure.keySize(id: id, bits: key.bitCount) }
        guard keys[current] != nil else { throw Failure.unknownCurrentKey(current) }
        self.keys = keys.mapValues { key in key.withUnsafeBytes { [UInt8]($0) } }
        self.current = current
    }

    /// Key IDs only, never key material.
    public var description: String { "AESGCMTransform(keys: \(keys.keys.sorted()), current: \(current))" }

    private static func authenticatedData(_ context: RecordTransformContext) -> Data {
        Data(context.keyspace.utf8) + Data([0]) + Data(context.key)
    }

    public func seal(_ record: UnsafeRawBufferPointer, context: RecordTransformContext) throws -> [UInt8] {
        guard let bytes = keys[current] else { throw Failure.unknownCurrentKey(current) }
        let key = SymmetricKey(data: bytes)
        let box = try AES.GCM.seal(Data(record), using: key, nonce: AES.GCM.Nonce(), authenticating: Self.authenticatedData(context))
        return [1, current] + Array(box.nonce) + Array(box.ciphertext) + Array(box.tag)
    }

    public func open(_ stored: UnsafeRawBufferPointer, context: RecordTransformContext) throws -> [UInt8] {
        guard stored.count >= 2 + 12 + 16, stored[0] == 1 else { throw Failure.malformed }
        guard let material = keys[stored[1]] else { throw Failure.unknownKey(stored[1]) }
        let key = SymmetricKey(data: material)
        let bytes = Data(stored)
        do {
            let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: bytes[2..<14]),
                                            ciphertext: bytes[14..<(bytes.count - 16)], tag: bytes[(bytes.count - 16)...])
            return Array(try AES.GCM.open(box, using: key, authenticating: Self.authenticatedData(context)))
        } catch {
            throw Failure.authentication
        }
    }
}
#endif
