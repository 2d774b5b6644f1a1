// Cargo's names for Depot's calls (wess/Cargo.objc: `CargoObject` and its storage drivers).
//
// A port from Cargo maps as follows. A `CargoObject` subclass with dynamic properties is a
// ``DynamicObject`` of the same entity (`DynamicObject(entity: "MyObject")`, Cargo's
// `initWithEntityName:`), whose properties are read and written by name (`object.firstname`);
// a typed ``Document`` is the typed alternative. A Cargo storage driver
// (`CargoStorageDriverProtocol`) is a `SimpleStorageBackend` wrapped in a
// `SimpleBackendDriver`: `saveDocument:forEntityName:` is `save(_:forKey:)`,
// `getDocumentForEntityName:` is `load(forKey:)`, `deleteEntityName:` is `delete(forKey:)`, and
// `keys()` lists what is stored; Depot orders, snapshots and commits on top of it. Cargo's
// `+CargoStorageDriverClass` is the driver given to `Store(driver:)`.
//
// Cargo kept one document per entity; Depot keeps many objects per entity, keyed by their
// identifying attribute (`id`, else `<entity>ID`). So `save` and `fetch` below act on objects in
// a transaction, and Cargo's README rule "fetch returns all results and delete removes them"
// holds for `fetch(entity:)` and `delete(entity:)`.
//
// Not forwarded: `fetchBackup` (a driver's backup copy; Depot keeps none) — the previous state
// is reached through undo, `revertToLast()` below.
//
// Each forward below calls the one Depot call named in its documentation.

import Foundation

extension DocumentTransaction {
    /// Cargo's `save` of an object: forwards to ``park(_:)-(DynamicObject)``. Returns the new
    /// revision of its record.
    @discardableResult
    public func save(_ object: DynamicObject) throws -> UInt64 {
        try park(object)
    }

    /// Cargo's `fetch` (every object of the entity): forwards to ``retrieveAll(dynamic:)``.
    public func fetch(entity: String) throws -> [DynamicObject] {
        try retrieveAll(dynamic: entity)
    }

    /// Cargo's `delete` (removes every object of the entity): forwards to
    /// ``deleteCollection(_:)``; the collection stays known. Returns how many were deleted.
    ///
    /// To delete one object, use ``delete(_:)-(DynamicObject)``.
    @discardableResult
    public func delete(entity: String) throws -> Int {
        try deleteCollection(entity)
    }
}

extension DynamicObject {
    /// Cargo's `valueForKey:`: forwards to ``subscript(dynamicMember:)`` (nil when the field is
    /// not set).
    public func value(forKey key: String) -> DocumentValue? {
        self[dynamicMember: key]
    }

    /// Cargo's `setValue:forKey:`: forwards to ``subscript(dynamicMember:)``; nil removes the
    /// field.
    public mutating func setValue(_ value: DocumentValue?, forKey key: String) {
        self[dynamicMember: key] = value
    }
}

extension UndoHistory {
    /// Cargo's `revertToLast`: forwards to ``undo()``.
    ///
    /// Undoes the latest step made through the store handle, whatever it touched (Cargo's driver
    /// restored the last saved document of one entity). Returns false when there is none.
    @discardableResult
    public func revertToLast() throws -> Bool {
        try undo()
    }
}
