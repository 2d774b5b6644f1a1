import Foundation

/// Hook consulted by `BinaryEncoder` to store some values as references instead of inline.
///
/// Depot uses it to write identified sub-documents as their own records and a reference in the parent.
@usableFromInline
package protocol BinaryReferenceEncoding: AnyObject {
    /// Called for every value encoded below the root (not for the root itself), except the built-in
    /// scalars (`Bool`, `String`, all integers, `Float`, `Double`, `Date`, `Data`, `UUID`, `URL`,
    /// `Decimal`, `DocumentValue`, `[String]`, `[UInt8]`, `[Int]`, `[Double]`) and `nil`.
    ///
    /// - Parameter value: The value about to be encoded.
    /// - Returns: `nil` to encode the value inline, or a `(collection, id)` pair: the encoder then
    ///   writes a REFERENCE tag instead of the value. `id` must be a scalar
    ///   (`.string`, `.int`, `.uint` or `.uuid`).
    func reference(for value: any Encodable) throws -> (collection: String, id: DocumentValue)?
}

/// Resolver consulted by `BinaryDecoder` when it meets a REFERENCE tag.
@usableFromInline
package protocol BinaryReferenceDecoding: AnyObject {
    /// Called when the decoder meets a REFERENCE tag while decoding a value of type `T`.
    ///
    /// - Parameters:
    ///   - type: The type the decoder is decoding at that position.
    ///   - collection: The collection name stored in the reference.
    ///   - id: The scalar id stored in the reference.
    /// - Returns: The resolved value.
    func resolve<T: Decodable>(_ type: T.Type, collection: String, id: DocumentValue) throws -> T
}
