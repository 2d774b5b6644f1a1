// GarageStorage's names for Depot's calls (mrlegowatch/GarageStorageSwift, `Garage`).
//
// A port from GarageStorage maps as follows. The `Garage` is a ``Store`` (`Store(path:)` with
// module `Depot`, or `Store(driver:)`); a top-level `Codable & Identifiable` type conforms to
// ``Document`` (`Mappable` below); `Syncable` and `SyncStatus` keep their names and cases.
//
// Same name, same meaning in Depot (not repeated here): `park(_:)`, `retrieveAll(_:)`,
// `delete(_:)` (it throws when the object is not stored, as GarageStorage's does),
// `deleteAll(_:)`, `setSyncStatus(_:for:)` of one object, `save()` (it throws instead of
// printing), and the protocols `Syncable` and `SyncStatus`.
//
// Not forwarded, and why:
// - `withAutosaveDisabled(_:)`: set `store.autosave = false`, park, `try store.save()`, then turn
//   it back on. The flag belongs to the store handle, shared by every thread using it; a helper
//   flipping it around a closure would change other threads' writes too.
// - `withDateEncodingStrategy` / `withDateDecodingStrategy`: dates are binary in records; JSON
//   dates (seeding, export) follow `Store.dateStrategy` or a type's `Document.dateStrategy`.
// - `dataEncryptionDelegate`: a `RecordTransform` given when the store is opened.
// - `Hashable`-only (unidentified) top-level objects: `tx.park(unidentified:)`.
//
// Each forward below calls the one Depot call named in its documentation; writes go through
// the store's pipeline (autosave, unit of work, change sets) exactly as that call does.

import Foundation

/// GarageStorage's `Mappable` (`Codable & Identifiable`): a Depot ``Document``.
///
/// A `Document`'s ID is a `DocumentID` (`String`, `UUID`, fixed-width integers), where
/// GarageStorage took any `LosslessStringConvertible` and stored it as a string.
public typealias Mappable = Document

extension Store {
    // MARK: GarageStorage (Swift API)

    /// GarageStorage's `isAutosaveEnabled`: forwards to ``autosave``.
    public var isAutosaveEnabled: Bool {
        get { autosave }
        set { autosave = newValue }
    }

    /// GarageStorage's `parkAll(_:)`: forwards to ``park(_:)-([D])``.
    public func parkAll<D: Document>(_ documents: [D]) throws {
        try park(documents)
    }

    /// GarageStorage's `retrieve(_:identifier:)`: forwards to ``retrieve(_:id:)``.
    ///
    /// The identifier is the document's own ID type (GarageStorage converted any identifier to
    /// a string first).
    public func retrieve<D: Document>(_ type: D.Type, identifier: D.ID) throws -> D? {
        try retrieve(D.self, id: identifier)
    }

    /// GarageStorage's `retrieveAll(_:withStatus:)`: forwards to
    /// ``DocumentTransaction/retrieve(_:withSyncStatus:)`` in a ``read(_:)``.
    ///
    /// Reads committed documents: with autosave off, parks and statuses not yet saved are not
    /// seen (GarageStorage's Core Data fetch saw them).
    public func retrieveAll<D: Document>(_ type: D.Type, withStatus status: SyncStatus) throws -> [D] {
        try read { try $0.retrieve(D.self, withSyncStatus: status) }
    }

    /// GarageStorage's `retrieveAll(withStatus:)` (the type inferred from the result): forwards
    /// to ``DocumentTransaction/retrieve(_:withSyncStatus:)`` in a ``read(_:)``, as
    /// ``retrieveAll(_:withStatus:)`` does.
    public func retrieveAll<D: Document>(withStatus status: SyncStatus) throws -> [D] {
        try read { try $0.retrieve(D.self, withSyncStatus: status) }
    }

    /// GarageStorage's `syncStatus(for:)`: forwards to ``syncStatus(of:id:)``.
    ///
    /// Returns nil when the object is not stored, where GarageStorage threw
    /// `failedToRetrieveObject`.
    public func syncStatus<D: Document>(for document: D) throws -> SyncStatus? {
        try syncStatus(of: D.self, id: document.id)
    }

    /// GarageStorage's `setSyncStatus(_:for:)` of an array: forwards to
    /// ``setSyncStatus(_:for:ids:)``.
    ///
    /// All or nothing: when one of them is not stored, none changes and the error names it
    /// (GarageStorage set the ones before the missing one).
    public func setSyncStatus<D: Document>(_ status: SyncStatus, for documents: [D]) throws {
        try setSyncStatus(status, for: D.self, ids: documents.map(\.id))
    }

    /// GarageStorage's `deleteAllObjects()`: forwards to ``deleteEverything()``.
    ///
    /// Synchronous and throwing, with no completion handler (GarageStorage deleted on its
    /// context's queue and called back on the main thread). Deletes this handle's alias only.
    public func deleteAllObjects() throws {
        try deleteEverything()
    }

    // MARK: GarageStorage (Objective-C era names)

    /// GarageStorage's `parkObject(_:)`: forwards to ``park(_:)-(D)``.
    public func parkObject<D: Document>(_ document: D) throws {
        try park(document)
    }

    /// GarageStorage's `retrieveObject(_:identifier:)`: forwards to ``retrieve(_:id:)``.
    ///
    /// Returns nil when nothing is stored under the identifier (the `MappableObject` API threw).
    public func retrieveObject<D: Document>(_ type: D.Type, identifier: D.ID) throws -> D? {
        try retrieve(D.self, id: identifier)
    }

    /// GarageStorage's `retrieveAllObjects(_:)`: forwards to ``retrieveAll(_:)``.
    public func retrieveAllObjects<D: Document>(_ type: D.Type) throws -> [D] {
        try retrieveAll(D.self)
    }

    /// GarageStorage's `deleteObject(_:)`: forwards to ``delete(_:)``, which throws
    /// `DepotError.Code/notStored` when the object is not stored, as GarageStorage did.
    public func deleteObject<D: Document>(_ document: D) throws {
        try delete(document)
    }

    /// GarageStorage's `deleteAllObjects(_:)` of one class: forwards to ``deleteAll(_:)``.
    public func deleteAllObjects<D: Document>(_ type: D.Type) throws {
        try deleteAll(D.self)
    }
}
