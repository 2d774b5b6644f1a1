import Foundation

/// A registered Swift type for a seed entity: how to prepare its collection and check its
/// seeded records. Index and sync-status entries are kept by the record pipeline like for any
/// other write; the record itself keeps every seeded field, also those the type does not declare.
struct SeedTypeRegistration: @unchecked Sendable {
    // @unchecked Sendable: the closures only call generic store functions for the type (no state).
    let collection: String
    let idKind: IDKind
    /// Before any record is written: reconciles the collection's schema with the type's
    /// declared indexes (so that the pipeline keeps them while seeding).
    let prepare: (DocumentTransaction) throws -> Void
    /// After: reads the record back as the Swift type (validating it).
    /// Makes seeded dates exact (strings or numbers where the type has a `Date`).
    let convertDates: (DocumentTransaction, DocumentValue, DateStrategy) throws -> Void
    let validate: (DocumentTransaction, DocumentValue) throws -> Void
}

/// Imports a seed tree (DLData's format) into one alias in two phases: ``plan(root:)`` reads,
/// parses and checks the whole tree (files and allowed remote loads) with no transaction open;
/// ``apply(in:)`` then writes the plan in one write transaction, so the single writer is never
/// held during I/O. Generated IDs (`""`) are placeholders until `apply` allocates them, in one
/// block, inside the transaction.
final class Seeder {
    struct Instance {
        var collection: String
        var key: [UInt8]
        var kind: IDKind
        var id: DocumentValue?
        var value: DocumentValue
        var place: (file: String, path: String)
        /// The number of the generated ID this instance waits for, if any.
        var generatedSlot: Int?
        /// The first of the generated values its other "<uniqueID>" properties wait for (one
        /// each, in field order), and their kind.
        var propertySlots: (first: Int, kind: IDKind)?
    }

    let reader: SeedReader
    let types: [String: SeedTypeRegistration]
    private var instances: [String: [[UInt8]: Int]] = [:]   // collection → key → index in `ordered`
    private var ordered: [Instance] = []
    /// The ID kind of each collection's first instance (looked up per instance: a scan of
    /// `ordered` made seeding quadratic in a tree of several entities).
    private var entityKinds: [String: IDKind] = [:]
    private var loaded: [SeedSource: [DocumentValue]] = [:]  // file → references to its instances
    private var chain: [SeedSource] = []
    private var found = 0
    private(set) var generated = 0
    /// DLData's placeholder for a generated unique number.
    static let uniqueIDMarker = "<uniqueID>"

    init(reader: SeedReader, types: [String: SeedTypeRegistration]) {
        self.reader = reader
        self.types = types
    }

    /// Phase one, outside any transaction: loads and checks the whole tree.
    func plan(root: SeedSource) throws {
        _ = try load(root, place: (root.display(root: reader.root), "$"))
    }

    /// Phase two, in `tx`: allocates generated IDs, stores every record, checks registered
    /// types; returns records per collection. Runs again from the plan if the transaction is
    /// retried (the plan is not changed).
    func apply(in tx: DocumentTransaction) throws -> [String: Int] {
        let instances = try resolveGeneratedIDs(in: tx)
        for collection in Set(instances.map(\.collection)).sorted() {
            try types[collection]?.prepare(tx)
        }
        for instance in instances { try store(instance, in: tx) }
        // Dates first (twice: a document whose references are converted later is finished in the
        // second pass), then every registered instance must decode as its type.
        let dates = reader.options.dateStrategy ?? tx.store.core.dateStrategy
        for _ in 0..<2 {
            for instance in instances {
                guard let registration = types[instance.collection], let id = instance.id else { continue }
                do {
                    try registration.convertDates(tx, id, dates)
                } catch let mismatch as SeededDateMismatch {
                    throw DepotError.seedFailed(.typeMismatch, file: instance.place.file, jsonPath: instance.place.path + mismatch.path.dropFirst(),
                                                detail: "a date field holds a number, but the date strategy (\(mismatch.strategy)) writes dates as text")
                }
            }
        }
        for instance in instances {
            guard let registration = types[instance.collection], let id = instance.id else { continue }
            do {
                try registration.validate(tx, id)
            } catch let error as DepotError where error.code == .seedFailed {
                throw error
            } catch {
                throw DepotError.seedFailed(.typeMismatch, file: instance.place.file, jsonPath: instance.place.path,
                                detail: "does not fit the registered type for '\(instance.collection)': \(error)")
            }
        }
        var counts: [String: Int] = [:]
        for instance in instances { counts[instance.collection, default: 0] += 1 }
        return counts
    }

    // MARK: Generated IDs

    /// Placeholders are byte values, which JSON never produces, so none can be mistaken for data.
    private static let placeholderMarker: [UInt8] = [0xDE, 0xB0, 0x5E, 0xED]

    private static func placeholder(_ slot: Int) -> DocumentValue {
        var bytes = placeholderMarker
        withUnsafeBytes(of: UInt64(slot).bigEndian) { bytes.append(contentsOf: $0) }
        return .bytes(bytes)
    }

    private static func slot(of value: DocumentValue) -> Int? {
        guard case .bytes(let b) = value, b.count == 12, b.starts(with: placeholderMarker) else { return nil }
        return Int(b[4...].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
    }

    /// The plan's instances with real IDs in place of the placeholders (IDs and references).
    private func resolveGeneratedIDs(in tx: DocumentTransaction) throws -> [Instance] {
        if generated == 0 { return ordered }
        let first = try tx.context.allocateUniqueIDs(count: UInt64(generated))
        var kinds: [Int: IDKind] = [:] // of the generated IDs, which references name too
        for instance in ordered { if let slot = instance.generatedSlot { kinds[slot] = instance.kind } }
        func real(_ slot: Int, as kind: IDKind? = nil) throws -> DocumentValue {
            let n = first + UInt64(slot)
            switch kind ?? kinds[slot] ?? .string {
            case .signed:
                guard let signed = Int64(exactly: n) else { throw DepotError.exhausted("the unique ID counter passed the largest signed ID") }
                return .int(signed)
            case .unsigned: return .uint(n)
            default: return .string(UniqueIDs.string(for: n))
            }
        }
        func substitute(_ value: DocumentValue) throws -> DocumentValue {
            switch value {
            case .bytes: return try Self.slot(of: value).map { try real($0) } ?? value
            case .array(let items): return .array(try items.map(substitute))
            case .object(let fields): return .object(try fields.map { DocumentValue.Field($0.key, try substitute($0.value)) })
            case .reference(let collection, let id): return .reference(collection: collection, id: try substitute(id))
            default: return value
            }
        }
        return try ordered.map { planned in
            var instance = planned
            if let slots = planned.propertySlots, case .object(var fields) = planned.value {
                let idField = Self.idField(of: planned.collection, in: fields)
                var next = slots.first
                for i in fields.indices where fields[i].key != idField && fields[i].value == .string(Self.uniqueIDMarker) {
                    fields[i].value = try real(next, as: slots.kind)
                    next += 1
                }
                instance.value = .object(fields)
            }
            instance.value = try substitute(instance.value)
            if let slot = planned.generatedSlot {
                let id = try real(slot)
                guard let key = instance.kind.key(for: id) else {
                    throw DepotError.seedFailed(.invalidIdentity, file: planned.place.file, jsonPath: planned.place.path,
                                    detail: "a generated ID does not fit the \(instance.kind.rawValue) IDs of '\(planned.collection)'")
                }
                instance.id = id
                instance.key = key
            } else if planned.kind == .content {
                instance.key = SHA256.hash(instance.value.binary())
            }
            return instance
        }
    }

    /// What an ID of `kind` must be, for messages.
    static func describe(_ kind: IDKind) -> String {
        switch kind {
        case .signed: return "an integer from \(Int64.min) to \(Int64.max)"
        case .unsigned: return "an integer from 0 to \(UInt64.max)"
        case .uuid: return "a UUID"
        case .string, .content: return "a non-empty string of at most \(StorageLimits.standardMaxKeySize) bytes (UTF-8)"
        }
    }

    // MARK: Files

    /// The line and column (both from 1; the column in characters) of byte `offset` of `data`,
    /// for an error a person can find in an editor.
    static func lineAndColumn(of offset: Int, in data: Data) -> (line: Int, column: Int) {
        let end = min(max(offset, 0), data.count)
        let before = data.prefix(end)
        let line = before.reduce(1) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
        let lineStart = before.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? before.startIndex
        return (line, String(decoding: before[lineStart...], as: UTF8.self).count + 1)
    }

    /// Loads a file (once) and returns references to the instances found in it and in the files
    /// its `seedlings` link to.
    private func load(_ source: SeedSource, place: (String, String)) throws -> [DocumentValue] {
        if chain.contains(source) {
            let names = (chain + [source]).map { $0.display(root: reader.root) }
            throw DepotError.seedFailed(.cycle, file: place.0, jsonPath: place.1, detail: "seed files link in a circle: " + names.joined(separator: " → "))
        }
        if let done = loaded[source] { return done }
        let name = source.display(root: reader.root)
        let data = try reader.read(source, place: place)
        let root: DocumentValue
        do {
            root = try DocumentValue(json: data)
        } catch {
            var path: String?
            var detail = "\(error)"
            switch error as? BinaryCodecError {
            case .rejectedJSON(_, let at, _)?: path = at
            case .invalidJSON(let offset, let reason)?:
                let (line, column) = Self.lineAndColumn(of: offset, in: data)
                detail = "not valid JSON at line \(line), column \(column) (byte offset \(offset)): \(reason)"
            default: break
            }
            throw DepotError.seedFailed(.malformedJSON, file: name, jsonPath: path, detail: detail)
        }
        try checkDepth(root, limit: reader.options.maxDepth, file: name)
        guard case .object(let fields) = root else {
            throw DepotError.seedFailed(.invalidSeed, file: name, jsonPath: "$", detail: "a seed file must hold a JSON object")
        }
        chain.append(source)
        defer { chain.removeLast() }
        var references: [DocumentValue] = []
        for field in fields {
            let path = JSONParser.member("$", field.key)
            if field.key == "seedlings" {
                references += try followSeedlings(field.value, from: source, file: name, path: path)
                continue
            }
            switch field.value {
            case .object:
                references.append(try instance(of: field.key, field.value, file: name, path: path, source: source))
            case .array(let items):
                for (i, item) in items.enumerated() {
                    references.append(try instance(of: field.key, item, file: name, path: "\(path)[\(i)]", source: source))
                }
            default:
                throw DepotError.seedFailed(.invalidSeed, file: name, jsonPath: path,
                                detail: "entity '\(field.key)' must hold an object or an array of objects")
            }
        }
        loaded[source] = references
        reader.options.progress?(SeedProgress(filesRead: reader.filesRead, documentsFound: found, currentFile: name))
        return references
    }

    private func followSeedlings(_ value: DocumentValue, from source: SeedSource, file: String, path: String) throws -> [DocumentValue] {
        guard case .array(let links) = value else {
            throw DepotError.seedFailed(.invalidSeed, file: file, jsonPath: path, detail: "seedlings must be an array of links")
        }
        var references: [DocumentValue] = []
        for (i, link) in links.enumerated() {
            let linkPath = "\(path)[\(i)]"
            func fail(_ detail: String) -> DepotError { DepotError.seedFailed(.invalidSeed, file: file, jsonPath: linkPath, detail: detail) }
            guard case .object(let linkFields) = link else { throw fail("a seedling must be an object holding a seedFile or seedUrl string") }
            if let unknown = linkFields.first(where: { $0.key != "seedFile" && $0.key != "seedUrl" }) {
                throw fail("unexpected key '\(unknown.key)' in a seedling (it holds one seedFile or seedUrl string)")
            }
            guard linkFields.count == 1, let only = linkFields.first else {
                throw fail(linkFields.isEmpty ? "a seedling needs a seedFile or seedUrl string" : "a seedling holds a seedFile or a seedUrl, not both")
            }
            guard let text = only.value.stringValue else { throw fail("\(only.key) must be a string") }
            if text.utf8.contains(0) { throw fail("\(only.key) contains a NUL character") }
            let target = only.key == "seedFile"
                ? try reader.resolve(seedFile: text, from: source, place: (file, linkPath))
                : try reader.resolve(seedURL: text, place: (file, linkPath))
            references += try load(target, place: (file, linkPath))
        }
        return references
    }

    private func checkDepth(_ value: DocumentValue, limit: Int, file: String, depth: Int = 0) throws {
        if depth > limit { throw DepotError.seedFailed(.limitExceeded, file: file, jsonPath: nil, detail: "JSON nested deeper than maxDepth (\(limit))") }
        switch value {
        case .array(let items): for item in items { try checkDepth(item, limit: limit, file: file, depth: depth + 1) }
        case .object(let fields): for f in fields { try checkDepth(f.value, limit: limit, file: file, depth: depth + 1) }
        default: break
        }
    }

    // MARK: Instances

    /// Registers one instance of `entity`; returns a reference to it.
    private func instance(of entity: String, _ value: DocumentValue, file: String, path: String, source: SeedSource) throws -> DocumentValue {
        guard case .object(var fields) = value else {
            throw DepotError.seedFailed(.invalidSeed, file: file, jsonPath: path, detail: "an instance of '\(entity)' must be a JSON object")
        }
        do { try StoreLayout.validateCollection(entity) } catch {
            throw DepotError.seedFailed(.invalidSeed, file: file, jsonPath: path, detail: "'\(entity)' cannot be a collection name: \(error)")
        }
        found += 1
        // Relationships: a property holding {"seedlings": […]} becomes references to what they load.
        for i in fields.indices {
            guard case .object(let inner) = fields[i].value, let links = inner.first(where: { $0.key == "seedlings" }) else { continue }
            let relationPath = JSONParser.member(path, fields[i].key)
            if let extra = inner.first(where: { $0.key != "seedlings" }) {
                throw DepotError.seedFailed(.invalidSeed, file: file, jsonPath: relationPath,
                                detail: "a relationship holds only 'seedlings'; unexpected key '\(extra.key)'")
            }
            fields[i].value = .array(try followSeedlings(links.value, from: source, file: file, path: relationPath + ".seedlings"))
        }
        let registration = types[entity]
        let idField = Self.idField(of: entity, in: fields)
        var kind: IDKind
        var key: [UInt8]
        var id: DocumentValue?
        var slot: Int?
        if let index = fields.firstIndex(where: { $0.key == idField }) {
            let idValue = fields[index].value
            let wanted = registration?.idKind
            if case .string(let s) = idValue, s.isEmpty || s == Self.uniqueIDMarker {
                // A generated ID: a placeholder until the write transaction allocates it.
                slot = generated
                generated += 1
                // DLData's "<uniqueID>" is a number; "" takes the collection's kind, else text.
                kind = wanted ?? (s.isEmpty ? .string : .unsigned)
                let placeholder = Self.placeholder(generated - 1)
                fields[index].value = placeholder
                key = Self.placeholderKey(generated - 1)
                id = placeholder
            } else {
                kind = try wanted ?? Self.inferKind(idValue, file: file, path: JSONParser.member(path, idField))
                guard let k = kind.key(for: idValue), !k.isEmpty, k.count <= StorageLimits.standardMaxKeySize else {
                    throw DepotError.seedFailed(.invalidIdentity, file: file, jsonPath: JSONParser.member(path, idField),
                                    detail: "the identifying attribute of '\(entity)' must be \(Self.describe(kind))")
                }
                key = k
                id = idValue
            }
        } else {
            if registration != nil {
                throw DepotError.seedFailed(.invalidIdentity, file: file, jsonPath: path, detail: "an instance of registered type '\(entity)' needs '\(idField)' or 'id'")
            }
            kind = .content
            key = SHA256.hash(DocumentValue.object(fields).binary())
            id = nil
        }
        let document = DocumentValue.object(fields)
        if let existing = instances[entity]?[key] {
            let other = ordered[existing]
            if other.value != document {
                throw DepotError.seedFailed(.conflictingDuplicate, file: file, jsonPath: path,
                                detail: "\(entity) \(id.map(displayID) ?? "(content)") also appears in \(other.place.file) at \(other.place.path) with different fields")
            }
        } else {
            if let existingKind = entityKinds[entity], existingKind != kind {
                throw DepotError.seedFailed(.invalidIdentity, file: file, jsonPath: path,
                                detail: "'\(entity)' instances mix \(existingKind.rawValue) and \(kind.rawValue) identifiers")
            }
            instances[entity, default: [:]][key] = ordered.count
            if entityKinds[entity] == nil { entityKinds[entity] = kind }
            var instance = Instance(collection: entity, key: key, kind: kind, id: id, value: document, place: (file, path), generatedSlot: slot)
            // DLData: any other property holding "<uniqueID>" gets a generated unique value too
            // (a number; the ID's kind for a registered type). The marker stays in the plan, so
            // the same object in another file compares equal; `apply` fills in the values.
            let markers = fields.filter { $0.key != idField && $0.value == .string(Self.uniqueIDMarker) }.count
            if markers > 0 {
                instance.propertySlots = (generated, registration?.idKind ?? .unsigned)
                generated += markers
            }
            ordered.append(instance)
        }
        return .reference(collection: entity, id: id ?? key.withUnsafeBytes { kind.value(ofKey: $0) })
    }

    /// The identifying attribute of an instance of `entity` with `fields`: `id`, else
    /// `<entity>ID`.
    private static func idField(of entity: String, in fields: [DocumentValue.Field]) -> String {
        fields.contains { $0.key == "id" } ? "id" : idFieldName(for: entity)
    }

    /// `Company` → `companyID`.
    static func idFieldName(for entity: String) -> String {
        guard let first = entity.first else { return "id" }
        return first.lowercased() + entity.dropFirst() + "ID"
    }

    static func inferKind(_ value: DocumentValue, file: String, path: String) throws -> IDKind {
        switch value {
        case .string: return .string
        case .int: return .signed
        case .uint: return .unsigned
        case .uuid: return .uuid
        default:
            throw DepotError.seedFailed(.invalidIdentity, file: file, jsonPath: path, detail: "an identifying attribute must be a string or an integer")
        }
    }

    /// A plan-only key for an instance with a generated ID (unique per placeholder).
    private static func placeholderKey(_ slot: Int) -> [UInt8] {
        guard case .bytes(let b) = placeholder(slot) else { return [] }
        return b
    }

    private func store(_ instance: Instance, in tx: DocumentTransaction) throws {
        let target: RecordTarget?
        do {
            target = try tx.context.target(alias: tx.alias, collection: instance.collection, kind: instance.kind, create: true)
        } catch let error as DepotError {
            throw DepotError.seedFailed(.invalidIdentity, file: instance.place.file, jsonPath: instance.place.path, detail: "\(error)")
        }
        guard let target else {
            throw DepotError.seedFailed(.invalidIdentity, file: instance.place.file, jsonPath: instance.place.path,
                            detail: "the collection '\(instance.collection)' could not be created")
        }
        let bytes = instance.value.binary()
        let flags = (instance.kind == .content ? Record.contentFlag : 0) | SyncStatus.notSynced.recordFlags
        do {
            _ = try instance.key.withUnsafeBytes { key in
                try tx.context.writeRecord(target, key: key, flags: flags,
                                   displayID: { instance.id.map(displayID) ?? "(content)" }) { buffer in buffer.append(contentsOf: bytes) }
            }
        } catch let error as DepotError where error.code == .uniqueIndexViolation {
            throw DepotError.seedFailed(.uniqueIndexViolation, file: instance.place.file, jsonPath: instance.place.path, detail: error.message)
        }
    }
}
