import Foundation

/// The unit of work of a store handle with autosave off (GarageStorage's flow): changes collect
/// in an in-memory overlay (``UnitOfWork``) that reads through the store see and `save()` commits.
extension Store {
    /// Whether the unit of work holds unsaved changes.
    public var hasUnsavedChanges: Bool { lock.withLock { !work.isEmpty } }

    /// How many changes the unit of work holds (one per document: the last write wins).
    public var unsavedChangeCount: Int { lock.withLock { work.count } }

    /// Commits the unit of work in one transaction, in the order the changes were made. On error
    /// nothing is committed and the unit of work is kept.
    ///
    /// The changes are taken inside the write transaction: of two saves, the one that commits
    /// later writes the newer changes.
    public func save() throws {
        if lock.withLock({ work.isEmpty }) { return }
        var savedThrough: Int?
        try write { tx in
            let snapshot = lock.withLock { work }
            savedThrough = snapshot.isEmpty ? nil : snapshot.lastSequence
            for step in snapshot.operations() { try step(tx) }
        }
        if let savedThrough { lock.withLock { work.removeThrough(sequence: savedThrough) } }
    }

    /// Discards the unit of work. (Its change numbers keep counting: a save running meanwhile
    /// forgets only what it saved, never a change made after the rollback.)
    public func rollback() { lock.withLock { work.discardAll() } }

    /// Reads through the store: with unsaved changes, the unit of work is laid over a read
    /// snapshot (no writer is taken).
    func readThrough<R>(_ body: (DocumentTransaction) throws -> R) throws -> R {
        let snapshot = lock.withLock { work }
        if snapshot.isEmpty { return try read(body) }
        var used: (any StorageTransaction)?
        defer { used?.attachment = nil }
        return try core.read { txn in
            used = txn
            let tx = view(of: txn)
            tx.overlay = snapshot
            return try body(tx)
        }
    }

    /// Parks `document` now, or in the unit of work when autosave is off.
    ///
    /// With autosave off the unit of work holds `document` itself: a value of a struct as it
    /// is now, an instance of a class as it will be at ``save()`` (changes made to it before
    /// the save are saved, as the key/value cache saves a class value changed in place; reads
    /// before the save return that instance). Its ID must not change before the save: the save
    /// then throws `DepotError.Code/invalidKey` and commits nothing.
    public func park<D: Document>(_ document: D) throws {
        if autosave {
            try write { try $0.park(document) }
            return
        }
        // Check the document (key, encoding) and find the documents it references, which the
        // park will store too, so that reads see them before `save()`.
        // Depth first, with the path from `document`: a document met again on its own path is a
        // cycle of eager references, which the save would refuse (as a park does) and keep
        // refusing; it is refused here. One met again elsewhere (a shared child) is fine.
        let maxKey = try core.maxKeySize()
        var seen = Set<UnitOfWork.Key>()
        var shadows: [(document: any Document, key: UnitOfWork.Key)] = []
        var path: [(key: UnitOfWork.Key, label: String, children: [any Document], next: Int)] = []
        func enter(_ next: any Document) throws {
            let (key, found) = try Self.inspect(next, alias: alias, maxKeySize: maxKey)
            if let start = path.firstIndex(where: { $0.key == key }) {
                throw DepotError.referenceCycle(chain: path[start...].map(\.label) + [Self.label(next)])
            }
            guard seen.insert(key).inserted else { return }
            shadows.append((next, key))
            path.append((key, Self.label(next), found, 0))
        }
        try enter(document)
        while let last = path.indices.last {
            guard path[last].next < path[last].children.count else {
                path.removeLast()
                continue
            }
            let child = path[last].children[path[last].next]
            path[last].next += 1
            try enter(child)
        }
        let own = shadows.removeFirst()
        lock.withLock {
            for shadow in shadows.reversed() {
                work.park(shadow.document, alias: shadow.key.alias, collection: shadow.key.collection, key: shadow.key.key, apply: nil)
            }
            let parkedKey = own.key.key
            work.park(document, alias: own.key.alias, collection: own.key.collection, key: parkedKey, apply: { tx in
                // An instance of a class is encoded at the save, as it is then: its ID must still
                // be the one it was parked (and read back) under.
                guard document.id.keyBytes == parkedKey else { throw Self.idChangedSincePark(document, parkedKey: parkedKey) }
                try tx.park(document)
            })
        }
    }

    /// The error of a save whose parked class instance changed its ID since the park.
    private static func idChangedSincePark<D: Document>(_ document: D, parkedKey: [UInt8]) -> DepotError {
        let was = (try? parkedKey.withUnsafeBytes { try D.ID(keyBytes: $0) }).map { displayID($0.documentValue) } ?? "\(parkedKey.count)-byte key"
        return DepotError.invalidKey(detail: "the \(D.collection) parked as '\(was)' has the ID '\(displayID(document.id.documentValue))' at save(): an instance of a class is saved as it is at save(), under the ID it was parked with; park it again after changing its ID (nothing was saved)")
    }

    /// How a reference cycle's chain names `document`: `Collection/ID`.
    private static func label<D: Document>(_ document: D) -> String {
        "\(D.collection)/\(displayID(document.id.documentValue))"
    }

    /// The unit-of-work key of `document` and the documents it references; checks its ID and
    /// that it encodes.
    private static func inspect<D: Document>(_ document: D, alias: String, maxKeySize: Int) throws -> (UnitOfWork.Key, [any Document]) {
        let key = document.id.keyBytes
        if let problem = RecordKeyRule.problem(count: key.count, limit: maxKeySize, collection: D.collection, isKeyValue: false) {
            throw problem
        }
        let collector = ReferenceCollector()
        var encoder = BinaryEncoder()
        encoder.referenceHook = collector
        do {
            _ = try encoder.encode(document)
        } catch let error as EncodingError {
            throw DepotError.encodingFailed(collection: D.collection, id: displayID(document.id.documentValue),
                                            fieldPath: error.fieldPath, detail: encodingDetail(error))
        }
        return (UnitOfWork.Key(alias: alias, collection: D.collection, key: key), collector.found)
    }

    /// Parks several documents now, or in the unit of work when autosave is off.
    public func park<D: Document>(_ documents: [D]) throws {
        if autosave {
            try write { try $0.park(documents) }
            return
        }
        for document in documents { try park(document) }
    }

    /// Deletes `document` now, or in the unit of work when autosave is off.
    ///
    /// - Throws: `DepotError.Code/notStored` when no such document is stored (nor parked in
    ///   the unit of work), as GarageStorage's `deleteObject` does;
    ///   `DocumentTransaction.delete(_:)` returns false instead.
    public func delete<D: Document>(_ document: D) throws { try delete(D.self, id: document.id) }

    /// Deletes by ID now, or in the unit of work when autosave is off.
    ///
    /// - Throws: `DepotError.Code/notStored` when no such document is stored (nor parked in
    ///   the unit of work).
    public func delete<D: Document>(_ type: D.Type, id: D.ID) throws {
        if autosave {
            try write { tx in
                guard try tx.delete(D.self, id: id) else { throw notStored("delete", D.self, [id]) }
            }
            return
        }
        guard try exists(D.self, id: id) else { throw notStored("delete", D.self, [id]) }
        let key = id.keyBytes
        let cascades = core.engine.deleteRules(for: D.collection).contains { $0.owning }
        lock.withLock {
            work.delete(alias: alias, collection: D.collection, key: key, keepingPark: cascades, apply: { _ = try $0.delete(D.self, id: id) })
        }
    }

    /// Sets the sync status of `document` now, or in the unit of work when autosave is off
    /// (GarageStorage's `setSyncStatus`; `save()` applies it, `rollback()` drops it, reads
    /// through the store see it). A later park of the document stores its own status again.
    ///
    /// - Throws: `DepotError.Code/notStored` when the document is not stored (nor parked in
    ///   the unit of work).
    public func setSyncStatus<D: Document>(_ status: SyncStatus, for document: D) throws {
        try setSyncStatus(status, for: D.self, ids: [document.id])
    }

    /// The sync status of a document (seeing unsaved changes), or nil when it is not stored.
    public func syncStatus<D: Document>(of type: D.Type, id: D.ID) throws -> SyncStatus? {
        try readThrough { tx in
            guard let overlay = tx.overlay else { return try tx.syncStatus(of: D.self, id: id) }
            let exists: Bool
            var own: SyncStatus?
            if let pending = try overlay.lookup(D.self, alias: alias, id: id) {
                exists = pending.document != nil
                own = pending.document.map { ($0 as? any Syncable)?.syncStatus ?? .notSynced }
            } else {
                own = try tx.syncStatus(of: D.self, id: id)
                exists = own != nil
            }
            guard exists else { return nil }
            return overlay.pendingStatus(alias: alias, collection: D.collection, key: id.keyBytes) ?? own
        }
    }

    /// Sets the sync status of the documents of `D` with `ids`, now or in the unit of work: all
    /// of them or, when one is not stored, none.
    ///
    /// - Throws: `DepotError.Code/notStored` naming the first ID that is not stored (nor
    ///   parked in the unit of work), as GarageStorage's `setSyncStatus` does;
    ///   ``DocumentTransaction/setSyncStatus(_:for:ids:)`` returns the missing IDs instead.
    public func setSyncStatus<D: Document>(_ status: SyncStatus, for type: D.Type, ids: [D.ID]) throws {
        let operation = "set the sync status of"
        if autosave {
            try write { tx in
                let missing = try tx.setSyncStatus(status, for: D.self, ids: ids)
                if !missing.isEmpty { throw notStored(operation, D.self, missing) }
            }
            return
        }
        let missing = try readThrough { tx in try ids.filter { try !tx.exists(D.self, id: $0) } }
        if !missing.isEmpty { throw notStored(operation, D.self, missing) }
        lock.withLock {
            for id in ids {
                work.setStatus(status, alias: alias, collection: D.collection, key: id.keyBytes,
                               apply: { _ = try $0.setSyncStatus(status, for: D.self, ids: [id]) })
            }
        }
    }

    /// Deletes every document of `D` now, or in the unit of work when autosave is off.
    public func deleteAll<D: Document>(_ type: D.Type) throws {
        if autosave {
            try write { _ = try $0.deleteAll(D.self) }
            return
        }
        lock.withLock { work.clear(alias: alias, collection: D.collection, apply: { _ = try $0.deleteAll(D.self) }) }
    }

    /// Deletes every document of this alias now, or in the unit of work when autosave is off.
    public func deleteEverything() throws {
        if autosave {
            try write { _ = try $0.deleteEverything() }
            return
        }
        lock.withLock { work.clear(alias: alias, collection: nil, apply: { _ = try $0.deleteEverything() }) }
    }

    /// The document of type `D` with `id` (seeing unsaved changes).
    ///
    /// On a driver with `StorageCapabilities.pipelinedReads` (PostgreSQL) and no unsaved
    /// changes, one wait for the server: the document is read with what this thread's read view
    /// resolved before, together with the schema version, which is confirmed afterwards (read
    /// again in the rare case it changed).
    public func retrieve<D: Document>(_ type: D.Type, id: D.ID) throws -> D? {
        if pipelinedReads, lock.withLock({ work.isEmpty }) {
            return try read(confirmingVersionLater: true, fromFirstOperation: true) { try $0.retrieveConfirmingVersion(D.self, id: id) }
        }
        return try readThrough { try $0.retrieve(D.self, id: id) }
    }
    /// Every document of type `D` in ID order (seeing unsaved changes).
    public func retrieveAll<D: Document>(_ type: D.Type) throws -> [D] { try readThrough { try $0.retrieveAll(D.self) } }
    /// How many documents of type `D` are stored (counting unsaved changes).
    public func count<D: Document>(_ type: D.Type) throws -> Int { try readThrough { try $0.count(D.self) } }
    /// Whether a document of type `D` with `id` is stored (seeing unsaved changes).
    public func exists<D: Document>(_ type: D.Type, id: D.ID) throws -> Bool { try readThrough { try $0.exists(D.self, id: id) } }

    /// `DepotError.Code/notStored` for the first of `missing` (not empty).
    private func notStored<D: Document>(_ operation: String, _ type: D.Type, _ missing: [D.ID]) -> DepotError {
        DepotError.notStored(operation: operation, alias: alias, collection: D.collection,
                             id: missing.first.map { displayID($0.documentValue) } ?? "", others: max(0, missing.count - 1))
    }
}
