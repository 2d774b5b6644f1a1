#if Macros
import DepotCore

/// Generates a direct binary codec for a struct stored as a Depot document: a
/// `BinaryCodableDocument` conformance whose `encodeBinary(into:)` and `init(binaryRecord:)` write
/// and read the stored properties field by field, without keyed containers.
///
/// ```swift
/// import Depot
/// import DepotMacros
///
/// @BinaryCodable
/// struct Person: Document {
///     var id: String
///     var name: String
///     var age: Int
///     var email: String?
///     var tags: [String]
/// }
/// ```
///
/// The bytes are exactly those of the type's synthesized `Codable` conformance through
/// `BinaryEncoder`: records written before the macro was added read back, and records written by
/// the generated code read back through `Codable`. `Bool`, `String`, the integers, `Float`,
/// `Double`, `Date`, `UUID` (and their optionals) are written directly; every other field
/// (nested structs, arrays, dictionaries, references, documents) goes through the generic
/// `Codable` path, references included. `CodingKeys` with plain string raw values (renames,
/// omitted properties with initial values) are honoured.
///
/// Refused at compile time: non-structs, custom `encode(to:)` / `init(from:)`, property
/// wrappers, `lazy` properties, properties without an explicit type, non-`String` coding keys.
/// Optionals are recognised by how they are written (`T?`, `T!`, `Optional<T>`): a type alias
/// to an optional is written as `null` when nil instead of being left out (both read back).
@attached(extension, conformances: BinaryCodableDocument,
          names: named(binaryFieldKeys), named(encodeBinary(into:)), named(init(binaryRecord:)))
public macro BinaryCodable() = #externalMacro(module: "DepotMacrosPlugin", type: "BinaryCodableMacro")
#endif
