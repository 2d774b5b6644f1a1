import Foundation

extension Store {
    /// Maps the seed entity named like `D`'s collection to `D`: seeded instances are checked by
    /// decoding them as `D` (a mismatch fails the import, naming the file and JSON path), their
    /// generated IDs take `D`'s ID kind, and `D`'s indexes are filled. Entities with no
    /// registered type are stored as schemaless documents.
    public func registerSeedType<D: Document>(_ type: D.Type) {
        core.register(SeedTypeRegistration(collection: D.collection, idKind: D.ID.idKind, prepare: { tx in
            _ = try tx.facts(D.self, create: true)
        }, convertDates: { tx, idValue, dates in
            guard let id = D.ID(documentValue: idValue) else { return }
            try tx.convertSeededDates(D.self, id: id, strategy: D.dateStrategy ?? dates)
        }, validate: { tx, idValue in
            guard let id = D.ID(documentValue: idValue) else {
                throw DepotError.invalidKey(detail: "the ID does not fit \(D.ID.self)")
            }
            _ = try tx.retrieve(D.self, id: id)
        }))
    }

    /// Imports the seed file at `url` and everything it links to, in one write transaction:
    /// all or nothing. Re-seeding the same tree updates records by their identifying attribute
    /// (records with generated IDs are created again, with new IDs).
    ///
    /// The format (DLData's): a JSON object whose keys name entities (collections), each holding
    /// an object or an array of objects; `"seedlings": [{"seedFile": "…"} | {"seedUrl": "…"}]`
    /// links further files; a property holding `{"seedlings": […]}` is a relationship whose
    /// linked instances are stored as their own records and referenced; `""` in an identifying
    /// attribute (`id`, else `<entity>ID` such as `companyID`) asks for a generated unique ID.
    ///
    /// - Throws: `DepotError` with code `DepotError.Code/seedFailed` naming the file and JSON path; the store is left as it was.
    @discardableResult
    public func seed(from url: URL, options: SeedOptions = SeedOptions()) throws -> SeedSummary {
        let started = Date()
        // Phase one: read, parse and check the whole tree with no transaction open.
        let (seeder, reader) = try Self.plan(url, options: options, types: core.seedTypes)
        // Phase two: apply the plan in one write transaction (it may run again if the map must
        // grow; the plan is not changed by a run).
        let counts = try write { tx in try seeder.apply(in: tx) }
        let summary = SeedSummary(documentsPerCollection: counts, filesRead: reader.filesRead, bytesRead: reader.bytesRead,
                                  generatedIDs: seeder.generated, seconds: 0)
        var result = summary
        result.seconds = Date().timeIntervalSince(started)
        return result
    }

    /// Reads, parses and checks the seed tree at `url` as ``seed(from:options:)`` does before it
    /// writes anything, with no store: for a tool that creates a store only for a tree that can
    /// be imported (`depot seed` into a new folder). Types registered with
    /// ``registerSeedType(_:)`` on a store are checked only when seeding that store.
    ///
    /// - Throws: `DepotError` with code `DepotError.Code/seedFailed` naming the file and JSON path.
    public static func checkSeedTree(at url: URL, options: SeedOptions = SeedOptions()) throws {
        _ = try plan(url, options: options, types: [:])
    }

    /// Phase one of seeding: resolves the root file inside its folder and plans the whole tree.
    private static func plan(_ url: URL, options: SeedOptions, types: [String: SeedTypeRegistration]) throws -> (Seeder, SeedReader) {
        let rootFile: SeedSource
        let rootFolder: String
        if url.isFileURL {
            guard let resolved = SeedReader.realPath(url.path) else {
                throw DepotError.seedFailed(.missingFile, file: url.path, jsonPath: nil, detail: "the seed file does not exist")
            }
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: resolved, isDirectory: &isFolder), isFolder.boolValue {
                throw DepotError.seedFailed(.unreadableFile, file: url.path, jsonPath: nil, detail: "is a folder, not a seed file")
            }
            rootFile = .file(resolved)
            let folder = options.rootDirectory.map { $0.path } ?? FilePaths.parent(of: resolved)
            guard let realFolder = SeedReader.realPath(folder) else {
                throw DepotError.seedFailed(.missingFile, file: folder, jsonPath: nil, detail: "the seed folder does not exist")
            }
            rootFolder = realFolder
        } else {
            rootFolder = options.rootDirectory.flatMap { SeedReader.realPath($0.path) } ?? "/nonexistent-seed-root"
            let reader = SeedReader(root: rootFolder, options: options)
            rootFile = try reader.resolve(seedURL: url.absoluteString, place: (url.absoluteString, "$"))
        }
        if case .file(let path) = rootFile, !(path.hasPrefix(rootFolder + "/")) {
            throw DepotError.seedFailed(.outsideRoot, file: path, jsonPath: nil, detail: "the seed file is outside the seed folder '\(rootFolder)'")
        }
        let reader = SeedReader(root: rootFolder, options: options)
        let seeder = Seeder(reader: reader, types: types)
        try seeder.plan(root: rootFile)
        return (seeder, reader)
    }
}

extension DocumentTransaction {
    /// Makes the seeded record of `D` with `id` exact: where decoding it as `D` needs a date and
    /// the seed holds a string or number, the value is converted with `strategy` and stored as a
    /// date. Other decoding errors are left for validation to report.
    func convertSeededDates<D: Document>(_ type: D.Type, id: D.ID, strategy: DateStrategy) throws {
        guard let facts = try facts(D.self, create: false) else { return }
        let target = facts.target
        try id.withKeyBytes { key in
            var converted = Set<String>()
            while true {
                guard let (flags, stored) = try context.txn.withValue(forKey: key, in: target.keyspace, { bytes in
                    let (header, document) = try openDocument(bytes, collection: target.collection, key: key, kind: target.kind)
                    return (header.flags, document)
                }) else { return }
                var probe = BinaryDecoder()
                probe.referenceResolver = referenceHook
                let failedPath: String
                do {
                    // Decodes: strings the decoder reads as dates (ISO 8601) become dates too.
                    let typed = try probe.decode(D.self, from: stored.binary())
                    var plain = BinaryEncoder()
                    plain.referenceHook = ContentReferences()
                    var mismatch: String?
                    let exact = stored.takingDates(from: try DocumentValue(binary: try plain.encode(typed)), strategy: strategy, mismatch: &mismatch)
                    if let mismatch { throw SeededDateMismatch(path: mismatch, strategy: strategy) }
                    if exact != stored {
                        let bytes = exact.binary()
                        try context.writeRecord(target, key: key, flags: flags, displayID: { displayID(id.documentValue) }) { $0.append(contentsOf: bytes) }
                    }
                    return
                } catch let mismatch as SeededDateMismatch {
                    throw mismatch
                } catch DecodingError.typeMismatch(let expected, let context) where expected == Date.self {
                    failedPath = renderCodingPath(context.codingPath)
                } catch DecodingError.dataCorrupted(let context) {
                    failedPath = renderCodingPath(context.codingPath)
                } catch {
                    return
                }
                guard !failedPath.contains("["), converted.insert(failedPath).inserted,
                      let value = stored.value(atPath: failedPath), let date = strategy.date(from: value) else { return }
                var fixed = stored
                fixed.setValue(.date(date), atPath: failedPath)
                let bytes = fixed.binary()
                try context.writeRecord(target, key: key, flags: flags, displayID: { displayID(id.documentValue) }) { $0.append(contentsOf: bytes) }
            }
        }
    }
}

/// A number in a date field of a seeded document where the date strategy writes dates as
/// strings (ISO 8601, a format): the decoder alone would read it as seconds since 2001.
struct SeededDateMismatch: Error {
    /// The JSON path of the number in the document (`$.born`).
    let path: String
    let strategy: DateStrategy
}
