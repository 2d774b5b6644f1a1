// DLData's names for Depot's calls (dagerydoo/DLData, `DLDataManager`, Objective-C over Core
// Data), spelled as Swift imports the Objective-C selectors.
//
// A port from DLData maps as follows. A `DLDataManager` (one model, one store alias) is a
// ``Store`` handle on an alias (`store.alias("ManagerA")`); its managed object context is a
// ``DocumentTransaction`` (`store.write { tx in … }`, or `store.beginTransaction()` with
// `tx.commit()` / `tx.rollback()`), so the queries below are the transaction's. A Core Data
// entity is a ``Document`` type (its `collection` is the entity name) or a ``DynamicObject``;
// fetch request templates are registered with ``Store/registerFetchRequest(_:for:variables:_:)``,
// and a seed type with ``Store/registerSeedType(_:)``.
//
// Same name, same meaning in Depot (not repeated here): `fetchOne` (with `where:`; DLData's
// `matching:` label is forwarded below), `rollback()` of a transaction or of the store's unit of
// work, `commit()` of an explicit transaction. DLData's delegate call
// `dataManager:createdObjects:updatedObjects:deletedObjects:` is ``StoreObserver``'s
// `store(_:createdObjects:updatedObjects:deletedObjects:)` (register with `addObserver`), and
// `dataManagerSupportsUndo:` is ``Store/enableUndo(levels:)``.
//
// Not forwarded, and why:
// - `entityWithName:` inserted a new managed object: build a `DynamicObject(entity:)` or a typed
//   document and park it (`tx.park(_:)`); nothing is stored until it is parked.
// - `flushPendingData` committed every store of the process: commit each transaction.
// - `undoGroup` / `redoGroup`: `undo()` and `redo()` below undo a whole group.
// - `DLUniqueIDGenerator.generateUniqueNumber` (an `NSNumber`): `generateUniqueID()` below.
//
// Each forward below calls the one Depot call named in its documentation.

import Foundation

extension DocumentTransaction {
    // MARK: DLData's fetches

    /// DLData's `fetchAll:matching:sortedBy:`: forwards to
    /// ``fetch(_:where:sortedBy:limit:offset:)``.
    public func fetchAll<D: Document>(_ type: D.Type, matching predicate: Predicate<D>?,
                                      sortedBy sortDescriptors: [SortDescriptor<D>] = []) throws -> [D] {
        try fetch(D.self, where: predicate, sortedBy: sortDescriptors)
    }

    /// DLData's `fetchOne:matching:sortedBy:`: forwards to ``fetchOne(_:where:sortedBy:)``.
    public func fetchOne<D: Document>(_ type: D.Type, matching predicate: Predicate<D>?,
                                      sortedBy sortDescriptors: [SortDescriptor<D>] = []) throws -> D? {
        try fetchOne(D.self, where: predicate, sortedBy: sortDescriptors)
    }

    /// DLData's `fetchCount:matching:`: forwards to ``count(_:)-(FetchRequest<D>)`` of a request
    /// with `predicate`.
    public func fetchCount<D: Document>(_ type: D.Type, matching predicate: Predicate<D>?) throws -> Int {
        try count(FetchRequest<D>(predicate: predicate))
    }

    /// DLData's `executeFetchRequest:error:`: forwards to ``fetch(_:)``.
    ///
    /// Returns the documents only; ``execute(_:)`` also reports how the query ran.
    public func executeFetchRequest<D: Document>(_ request: FetchRequest<D>) throws -> [D] {
        try fetch(request)
    }

    // MARK: DLData's fetch request templates

    /// DLData's `fetchRequestNamed:substitutionVariables:`: forwards to
    /// ``fetchRequest(named:as:substitutions:)``.
    public func fetchRequestNamed<D: Document>(_ name: String, as type: D.Type = D.self,
                                               substitutionVariables: [String: Any] = [:]) throws -> FetchRequest<D> {
        try fetchRequest(named: name, as: D.self, substitutions: substitutionVariables)
    }

    /// DLData's `executeFetchRequestNamed:substitutionVariables:error:`: forwards to
    /// ``fetch(named:as:substitutions:)``.
    public func executeFetchRequestNamed<D: Document>(_ name: String, as type: D.Type = D.self,
                                                      substitutionVariables: [String: Any] = [:]) throws -> [D] {
        try fetch(named: name, as: D.self, substitutions: substitutionVariables)
    }

    /// DLData's `countForRequestNamed:substitutionVariables:`: forwards to
    /// ``count(named:as:substitutions:)``.
    public func countForRequestNamed<D: Document>(_ name: String, as type: D.Type = D.self,
                                                  substitutionVariables: [String: Any] = [:]) throws -> Int {
        try count(named: name, as: D.self, substitutions: substitutionVariables)
    }

    // MARK: DLData's deletion

    /// DLData's `deleteEntity:`: forwards to ``delete(_:)-(D)``. Returns whether it was stored
    /// (DLData returned nothing).
    @discardableResult
    public func deleteEntity<D: Document>(_ document: D) throws -> Bool {
        try delete(document)
    }

    /// DLData's `deleteEntity:` of an untyped entity: forwards to ``delete(_:)-(DynamicObject)``.
    @discardableResult
    public func deleteEntity(_ object: DynamicObject) throws -> Bool {
        try delete(object)
    }
}

extension Store {
    // MARK: DLData's store management

    /// DLData's `seedDataStore:`: forwards to ``seed(from:options:)`` with the default options.
    ///
    /// All or nothing, in one write transaction; throws `DepotError` (code
    /// `DepotError.Code/seedFailed`) naming the file and JSON path (DLData logged and went on).
    @discardableResult
    public func seedDataStore(_ url: URL) throws -> SeedSummary {
        try seed(from: url)
    }

    /// DLData's `purgeDataStore`: forwards to ``clearAlias(_:)`` of this handle's alias.
    ///
    /// Every document and key/value entry of the alias goes; its collections, indexes and
    /// registered fetch requests stay (DLData deleted the store file and opened a new one of
    /// the same model). ``dropAlias(_:)`` removes the alias entirely.
    @discardableResult
    public func purgeDataStore() throws -> Int {
        try clearAlias(alias)
    }

    /// DLData's `commit` of the manager's context: forwards to ``save()`` (the unit of work,
    /// with autosave off). An explicit transaction commits with ``DocumentTransaction/commit()``.
    public func commit() throws {
        try save()
    }

    // MARK: DLData's undo

    /// DLData's `undo`: forwards to ``UndoHistory/undo()`` of ``undoHistory``.
    ///
    /// Returns false, doing nothing, when undo is not enabled (``enableUndo(levels:)``) or there
    /// is nothing to undo; throws `DepotError.Code/undoConflict` when someone else changed a
    /// record of the step since.
    @discardableResult
    public func undo() throws -> Bool {
        try undoHistory?.undo() ?? false
    }

    /// DLData's `redo`: forwards to ``UndoHistory/redo()`` of ``undoHistory``; false when undo
    /// is not enabled or there is nothing to redo.
    @discardableResult
    public func redo() throws -> Bool {
        try undoHistory?.redo() ?? false
    }

    /// DLData's `beginUndoGroup`: forwards to ``UndoHistory/beginGroup()`` of ``undoHistory``
    /// (nothing when undo is not enabled).
    public func beginUndoGroup() {
        undoHistory?.beginGroup()
    }

    /// DLData's `endUndoGroup`: forwards to ``UndoHistory/endGroup()`` of ``undoHistory``
    /// (nothing when undo is not enabled).
    public func endUndoGroup() {
        undoHistory?.endGroup()
    }
}

extension UniqueIDs {
    /// DLData's `DLUniqueIDGenerator.generateUniqueID`: forwards to `next()`
    /// (`store.uniqueIDs.generateUniqueID()`); inside a write transaction use
    /// ``DocumentTransaction/nextUniqueID()``.
    public func generateUniqueID() throws -> UInt64 {
        try next()
    }
}
