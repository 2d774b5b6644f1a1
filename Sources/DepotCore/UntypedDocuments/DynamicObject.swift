import Foundation

/// A schemaless document of a named entity (Cargo's `CargoObject`): fields are read and written
/// as properties, stored through any driver like typed documents, and convertible to and from
/// them.
///
/// ```swift
/// var person = DynamicObject(entity: "Person", id: "p1")
/// person.firstname = "Wess"
/// person.age = 38
/// try store.write { tx in try tx.park(person) }
/// let typed = try person.decode(as: Person.self)
/// ```
///
/// The identifying attribute is `id`, else `<entity>ID` (`Person` → `personID`), as in seeding.
@dynamicMemberLookup
public struct DynamicObject: Sendable, Hashable {
    /// The entity (collection) name.
    public var entity: String
    /// The fields, in order.
    public var fields: [DocumentValue.Field]

    /// An object of `entity` with an identifying attribute `id` (when given) and `fields`.
    public init(entity: String, id: DocumentValue? = nil, fields: [(String, DocumentValue)] = []) {
        self.entity = entity
        self.fields = []
        if let id { self.fields.append(.init("id", id)) }
        guard fields.count > 16 else {
            for (k, v) in fields { self[dynamicMember: k] = v }
            return
        }
        // Many fields (an imported JSON object): the same result (a repeated name keeps its
        // first place and its last value) without a search per field, which made it quadratic.
        self.fields.reserveCapacity(fields.count + 1)
        var places: [String: Int] = id == nil ? [:] : ["id": 0]
        for (k, v) in fields {
            if let i = places[k] {
                self.fields[i].value = v
            } else {
                places[k] = self.fields.count
                self.fields.append(.init(k, v))
            }
        }
    }

    /// A dynamic copy of a typed document.
    public init<D: Document>(_ document: D) throws {
        entity = D.collection
        let bytes: [UInt8]
        do {
            bytes = try BinaryEncoder().encode(document)
        } catch {
            let id = displayID(document.id.documentValue)
            throw DepotError.encoding(error, of: "document \(D.collection)/\(id)", collection: D.collection, id: id)
        }
        let value = try DocumentValue(binary: bytes)
        fields = value.fields ?? []
    }

    /// The field `name`, or nil; setting nil removes it.
    public subscript(dynamicMember name: String) -> DocumentValue? {
        get { fields.first { $0.key == name }?.value }
        set {
            if let i = fields.firstIndex(where: { $0.key == name }) {
                if let newValue { fields[i].value = newValue } else { fields.remove(at: i) }
            } else if let newValue {
                fields.append(.init(name, newValue))
            }
        }
    }

    /// The name of the identifying attribute (`id`, else `<entity>ID`).
    public var idField: String {
        if fields.contains(where: { $0.key == "id" }) { return "id" }
        guard let first = entity.first else { return "id" }
        return first.lowercased() + entity.dropFirst() + "ID"
    }

    /// The identifying attribute's value, if any.
    public var id: DocumentValue? { self[dynamicMember: idField] }

    /// The object as one document value.
    public var value: DocumentValue { .object(fields) }

    /// Decodes the object as a typed document.
    ///
    /// - Throws: `DepotError` with code `DepotError.Code/decodingFailed` naming the entity,
    ///   the ID and the field path.
    public func decode<D: Decodable>(as type: D.Type) throws -> D {
        do {
            return try BinaryDecoder().decode(D.self, from: value.binary())
        } catch {
            let id = self.id.map(displayID)
            throw DepotError.decoding(error, of: "dynamic object \(entity)/\(id ?? "(no ID)")", collection: entity, id: id)
        }
    }
}

extension DocumentTransaction {
    /// Stores a dynamic object in its entity's collection (keyed by its identifying attribute,
    /// or by its content when it has none). Returns the record's revision.
    @discardableResult
    public func park(_ object: DynamicObject) throws -> UInt64 {
        try context.requireWritable("park a \(object.entity) object")
        let kind: IDKind
        let key: [UInt8]
        if let id = object.id {
            switch id {
            case .string: kind = .string
            case .int: kind = .signed
            case .uint: kind = .unsigned
            case .uuid: kind = .uuid
            default: throw DepotError.invalidKey(detail: "the identifying attribute '\(object.idField)' of a \(object.entity) must be a string, an integer or a UUID")
            }
            guard let k = kind.key(for: id) else { throw DepotError.invalidKey(detail: "the identifying attribute of a \(object.entity) does not fit its kind") }
            key = k
        } else {
            kind = .content
            key = SHA256.hash(object.value.binary())
        }
        guard let target = try context.target(alias: alias, collection: object.entity, kind: kind, create: true) else {
            throw DepotError.storageInconsistent("the collection '\(object.entity)' could not be created")
        }
        let bytes = object.value.binary()
        return try key.withUnsafeBytes { k in
            try context.writeRecord(target, key: k, flags: (kind == .content ? Record.contentFlag : 0) | SyncStatus.notSynced.recordFlags,
                            displayID: { object.id.map(displayID) ?? "(content)" }) { $0.append(contentsOf: bytes) }
        }
    }

    /// The dynamic object of `entity` with identifying value `id`, or nil.
    public func retrieve(dynamic entity: String, id: DocumentValue) throws -> DynamicObject? {
        guard let target = try context.existingTarget(alias: alias, collection: entity), let key = target.kind.key(for: id) else { return nil }
        return try key.withUnsafeBytes { k in
            if k.isEmpty || k.count > context.maxKeySize { return nil }
            return try context.txn.withValue(forKey: k, in: target.keyspace) { try dynamicObject(entity, $0, key: k, kind: target.kind) }
        }
    }

    /// Every object of `entity`, in key order.
    public func retrieveAll(dynamic entity: String) throws -> [DynamicObject] {
        guard let target = try context.existingTarget(alias: alias, collection: entity) else { return [] }
        var result: [DynamicObject] = []
        try context.txn.scan(target.keyspace, prefix: nil, reverse: false) { key, value in
            result.append(try dynamicObject(entity, value, key: key, kind: target.kind))
            return true
        }
        return result
    }

    /// Deletes the object (by its identifying attribute, or content). Returns whether it was stored.
    @discardableResult
    public func delete(_ object: DynamicObject) throws -> Bool {
        try context.requireWritable("delete a \(object.entity) object")
        guard let target = try context.existingTarget(alias: alias, collection: object.entity) else { return false }
        let kind = target.kind
        let key = kind == .content ? SHA256.hash(object.value.binary()) : object.id.flatMap { kind.key(for: $0) }
        guard let key else { return false }
        return try key.withUnsafeBytes { try context.deleteRecord(target, key: $0) }
    }

    private func dynamicObject(_ entity: String, _ record: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, kind: IDKind) throws -> DynamicObject {
        let value = try openDocument(record, collection: entity, key: key, kind: kind).document
        var object = DynamicObject(entity: entity)
        object.fields = value.fields ?? []
        return object
    }
}
