import Depot
import Foundation

/// A custom driver written the way a user would (like Cargo's user-defaults example): one JSON
/// file per key in a folder per keyspace. It has no transactions: operations apply one by one,
/// as its capabilities say, and savepoints are refused.
final class JSONFileDriver: StorageDriver, @unchecked Sendable {
    // @unchecked Sendable: all state is on disk; `lock` serializes every transaction.
    let folder: URL
    private let lock = NSRecursiveLock()

    init(folder: URL) throws {
        self.folder = folder
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    var capabilities: StorageCapabilities { [] }
    var location: String { folder.path }

    func read<R>(_ body: (any StorageTransaction) throws -> R) throws -> R {
        try lock.withLock {
            let txn = JSONFileTransaction(driver: self, readOnly: true)
            defer { txn.attachment = nil } // the document layer's state refers back to it
            return try body(txn)
        }
    }

    func write<R>(_ body: (any StorageTransaction) throws -> R) throws -> R {
        try lock.withLock {
            let txn = JSONFileTransaction(driver: self, readOnly: false)
            // The document layer's state and the handlers refer back to the transaction.
            defer {
                txn.attachment = nil
                txn.handlers = []
            }
            let result = try body(txn)
            for handler in txn.handlers { handler() }
            return result
        }
    }
}

struct JSONFileEntry: Codable {
    var key: String          // base64
    var values: [String]     // base64, sorted by bytes
}

final class JSONFileTransaction: StorageTransaction {
    let driver: JSONFileDriver
    let isReadOnly: Bool
    var attachment: AnyObject?
    var handlers: [() -> Void] = []
    var nestingDepth: Int { 0 }

    init(driver: JSONFileDriver, readOnly: Bool) {
        self.driver = driver
        self.isReadOnly = readOnly
    }

    func afterCommit(_ handler: @escaping () -> Void) { handlers.append(handler) }

    static func hex(_ bytes: some Sequence<UInt8>) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    func folder(_ keyspace: String) -> URL { driver.folder.appendingPathComponent(Self.hex(keyspace.utf8)) }
    func file(_ keyspace: Keyspace, _ key: UnsafeRawBufferPointer) -> URL {
        folder(keyspace.name).appendingPathComponent(Self.hex(key) + ".json")
    }

    func keyspace(named name: String, create: Bool, multiValue: Bool) throws -> Keyspace? {
        let url = folder(name)
        if !FileManager.default.fileExists(atPath: url.path) {
            guard create, !isReadOnly else { return nil }
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        }
        return Keyspace(name: name, handle: multiValue ? 1 : 0)
    }

    private func load(_ url: URL) throws -> JSONFileEntry? {
        guard let data = FileManager.default.contents(atPath: url.path) else { return nil }
        return try JSONDecoder().decode(JSONFileEntry.self, from: data)
    }

    private func store(_ entry: JSONFileEntry, _ url: URL) throws {
        try JSONEncoder().encode(entry).write(to: url, options: .atomic)
    }

    func withValue<R>(forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        guard let entry = try load(file(keyspace, key)), let first = entry.values.first, let bytes = Data(base64Encoded: first) else { return nil }
        return try bytes.withUnsafeBytes { try body($0) }
    }

    func put(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace) throws {
        let url = file(keyspace, key)
        let encoded = Data(value).base64EncodedString()
        var entry = try load(url) ?? JSONFileEntry(key: Data(key).base64EncodedString(), values: [])
        if keyspace.handle == 1 {
            if !entry.values.contains(encoded) {
                entry.values.append(encoded)
                entry.values.sort { Data(base64Encoded: $0)!.lexicographicallyPrecedes(Data(base64Encoded: $1)!) }
            }
        } else {
            entry.values = [encoded]
        }
        try store(entry, url)
    }

    func delete(forKey key: UnsafeRawBufferPointer, in keyspace: Keyspace) throws -> Bool {
        let url = file(keyspace, key)
        guard FileManager.default.fileExists(atPath: url.path) else { return false }
        try FileManager.default.removeItem(at: url)
        return true
    }

    func delete(forKey key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, in keyspace: Keyspace) throws -> Bool {
        let url = file(keyspace, key)
        guard var entry = try load(url) else { return false }
        let encoded = Data(value).base64EncodedString()
        guard let i = entry.values.firstIndex(of: encoded) else { return false }
        entry.values.remove(at: i)
        if entry.values.isEmpty { try FileManager.default.removeItem(at: url) } else { try store(entry, url) }
        return true
    }

    func scan(_ keyspace: Keyspace, lower: [UInt8]?, upper: [UInt8]?, prefix: [UInt8]?, reverse: Bool,
              _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder(keyspace.name).path)) ?? []
        let sorted = names.filter { $0.hasSuffix(".json") }.sorted() // hex names sort like their bytes
        for name in reverse ? sorted.reversed() : sorted {
            guard let entry = try load(folder(keyspace.name).appendingPathComponent(name)),
                  let key = Data(base64Encoded: entry.key).map({ [UInt8]($0) }) else { continue }
            if let lower, key.lexicographicallyPrecedes(lower) { continue }
            if let upper, !key.lexicographicallyPrecedes(upper) { continue }
            if let prefix, !key.starts(with: prefix) { continue }
            for value in reverse ? entry.values.reversed() : entry.values {
                guard let bytes = Data(base64Encoded: value) else { continue }
                let goOn = try key.withUnsafeBytes { k in try bytes.withUnsafeBytes { v in try body(k, v) } }
                if !goOn { return }
            }
        }
    }

    func count(_ keyspace: Keyspace) throws -> Int {
        var n = 0
        try scan(keyspace, lower: nil, upper: nil, prefix: nil, reverse: false) { _, _ in n += 1; return true }
        return n
    }

    func clear(_ keyspace: Keyspace) throws {
        let url = folder(keyspace.name)
        try FileManager.default.removeItem(at: url)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func drop(_ keyspace: Keyspace) throws { try FileManager.default.removeItem(at: folder(keyspace.name)) }

    func savepoint<R>(_ body: () throws -> R) throws -> R {
        throw DepotError.unsupported("savepoints need a driver with transactions; JSONFileDriver applies operations one by one")
    }
}
