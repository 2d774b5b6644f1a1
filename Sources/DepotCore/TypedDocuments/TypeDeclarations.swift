import DepotEngine
import Foundation

/// What a document type declares — its indexes (``Document/indexes`` builds them, and reads
/// each key path's field name), their stored definitions, its version, whether it is
/// ``Syncable``, `Equatable` or has a generated codec — worked out once per store core instead
/// of in every transaction that uses the type. A write transaction of one document (a
/// service's `store.write { park }` per request) would otherwise pay for it each time.
///
/// Also remembers whether a stored document of the type was found to hold, at each index's
/// field path, the value of the index's key path (see `checkIndexFields`): that is a property
/// of the type's encoding, checked with the first document a store core writes.
class AnyTypeDeclaration: @unchecked Sendable {
    // @unchecked Sendable: every stored property is immutable except `checked`, which is
    // guarded by `lock`.
    let definitions: [IndexDefinition]
    let isSyncable: Bool
    let isEquatable: Bool
    let tracksSyncStatus: Bool
    let version: Int
    let typeName: String
    let hasFieldDefaults: Bool
    let generated: (any BinaryCodableDocument.Type)?
    private let lock = NSLock()
    private var checked = false

    init(definitions: [IndexDefinition], isSyncable: Bool, isEquatable: Bool, tracksSyncStatus: Bool, version: Int,
         typeName: String, hasFieldDefaults: Bool, generated: (any BinaryCodableDocument.Type)?) {
        self.definitions = definitions
        self.isSyncable = isSyncable
        self.isEquatable = isEquatable
        self.tracksSyncStatus = tracksSyncStatus
        self.version = version
        self.typeName = typeName
        self.hasFieldDefaults = hasFieldDefaults
        self.generated = generated
        checked = definitions.isEmpty
    }

    /// Whether the index fields were found to hold their key paths' values (always, for a type
    /// without indexes: no lock then).
    var fieldsChecked: Bool { definitions.isEmpty || lock.withLock { checked } }

    /// Records that they were.
    func markFieldsChecked() { lock.withLock { checked = true } }
}

/// The declaration of `D`, with its indexes.
final class TypeDeclaration<D: Document>: AnyTypeDeclaration, @unchecked Sendable {
    // @unchecked Sendable: `indexes` is immutable, and a `DocumentIndex` is Sendable.
    let indexes: [DocumentIndex<D>]

    init() {
        let indexes = D.indexes
        self.indexes = indexes
        super.init(definitions: indexes.map(\.definition), isSyncable: D.self is any Syncable.Type, isEquatable: D.self is any Equatable.Type,
                   tracksSyncStatus: D.tracksSyncStatus, version: D.version, typeName: TypeNames.name(of: D.self),
                   hasFieldDefaults: !D.fieldDefaults.isEmpty, generated: D.self as? any BinaryCodableDocument.Type)
    }
}

/// The declarations of the document types a store core met, by type.
///
/// `@unchecked Sendable`: `byType` is guarded by `lock`. Taken when a transaction first uses a
/// type (a reused read context keeps its facts and does not come here).
final class TypeDeclarations: @unchecked Sendable {
    private let lock = NSLock()
    private var byType: [ObjectIdentifier: AnyTypeDeclaration] = [:]

    /// The declaration of `D`, worked out on first use.
    func of<D: Document>(_ type: D.Type) -> TypeDeclaration<D> {
        let id = ObjectIdentifier(D.self)
        // Safe: entries under ObjectIdentifier(D.self) are only ever TypeDeclaration<D>.
        if let known = lock.withLock({ byType[id] }) { return unsafeDowncast(known, to: TypeDeclaration<D>.self) }
        // Outside the lock: `D.indexes` is the app's code.
        let made = TypeDeclaration<D>()
        return lock.withLock {
            if let known = byType[id] { return unsafeDowncast(known, to: TypeDeclaration<D>.self) }
            byType[id] = made
            return made
        }
    }
}
