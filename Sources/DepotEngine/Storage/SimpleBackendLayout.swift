import Foundation

/// How ``SimpleBackendDriver`` lays keyspaces out as backend keys, and how it loads them and
/// computes what a commit changed.
///
/// - `<prefix>ks.<hex name>` → one byte: 1 for a multi-value keyspace, else 0 (the keyspace
///   exists even when empty).
/// - `<prefix>e.<hex name>.<hex key>` → a tag byte (0: one value follows; 1: values follow, each
///   as a 4-byte big-endian length and the bytes, sorted).
struct SimpleBackendLayout: Sendable {
    let prefix: String

    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func unhex(_ text: Substring) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
            default: return nil
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count / 2)
        var i = 0
        while i < chars.count {
            guard let high = nibble(chars[i]), let low = nibble(chars[i + 1]) else { return nil }
            out.append(high << 4 | low)
            i += 2
        }
        return out
    }

    func markerKey(_ space: String) -> String { prefix + "ks." + Self.hex(space.utf8) }
    func entryKey(_ space: String, _ key: [UInt8]) -> String { prefix + "e." + Self.hex(space.utf8) + "." + Self.hex(key) }

    static func encode(_ values: [[UInt8]], multiValue: Bool) -> Data {
        guard multiValue else { return Data([0] + (values.first ?? [])) }
        var out: [UInt8] = [1]
        for value in values {
            let n = UInt32(truncatingIfNeeded: value.count)
            out += [UInt8(n >> 24), UInt8(n >> 16 & 0xff), UInt8(n >> 8 & 0xff), UInt8(n & 0xff)]
            out += value
        }
        return Data(out)
    }

    static func decode(_ data: Data) -> (values: [[UInt8]], multiValue: Bool)? {
        let bytes = [UInt8](data)
        guard let tag = bytes.first else { return nil }
        if tag == 0 { return ([Array(bytes.dropFirst())], false) }
        guard tag == 1 else { return nil }
        var values: [[UInt8]] = []
        var i = 1
        while i < bytes.count {
            guard i + 4 <= bytes.count else { return nil }
            let n = Int(bytes[i]) << 24 | Int(bytes[i + 1]) << 16 | Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
            i += 4
            guard n <= bytes.count - i else { return nil }
            values.append(Array(bytes[i..<(i + n)]))
            i += n
        }
        return values.isEmpty ? nil : (values, true)
    }

    /// Everything the backend holds under the prefix, as the in-memory state.
    func load(from backend: any SimpleStorageBackend) throws -> InMemoryDriver.State {
        func failed(_ key: String, _ error: any Error) -> SimpleBackendError {
            SimpleBackendError(kind: .loadFailed, backendKey: key, detail: "the backend threw \(type(of: error))", underlying: error)
        }
        func corrupt(_ key: String, _ detail: String) -> SimpleBackendError {
            SimpleBackendError(kind: .corruptEntry, backendKey: key, detail: detail)
        }
        let keys: [String]
        do { keys = try backend.keys().filter { $0.hasPrefix(prefix) } } catch { throw failed("", error) }
        var spaces: [String: InMemoryDriver.Space] = [:]
        var entries: [String: [(key: [UInt8], values: [[UInt8]])]] = [:]
        for backendKey in keys {
            let parts = backendKey.dropFirst(prefix.count).split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count >= 2, let name = Self.unhex(parts[1]).map({ String(decoding: $0, as: UTF8.self) }) else {
                throw corrupt(backendKey, "not a key Depot writes")
            }
            let data: Data?
            do { data = try backend.load(forKey: backendKey) } catch { throw failed(backendKey, error) }
            guard let data else { continue } // deleted since listed
            switch (parts[0], parts.count) {
            case ("ks", 2):
                guard data.count == 1, let flag = data.first, flag <= 1 else { throw corrupt(backendKey, "a keyspace marker is one byte, 0 or 1") }
                spaces[name, default: InMemoryDriver.Space(multiValue: flag == 1)].multiValue = flag == 1
            case ("e", 3):
                guard let key = Self.unhex(parts[2]), !key.isEmpty else { throw corrupt(backendKey, "the record key is not hexadecimal") }
                guard let (values, multi) = Self.decode(data) else { throw corrupt(backendKey, "the values are truncated or of an unknown layout") }
                if spaces[name] == nil { spaces[name] = InMemoryDriver.Space(multiValue: multi) }
                entries[name, default: []].append((key, multi ? values.sorted { $0.lexicographicallyPrecedes($1) } : values))
            default:
                throw corrupt(backendKey, "not a key Depot writes")
            }
        }
        for (name, list) in entries {
            let sorted = list.sorted { $0.key.lexicographicallyPrecedes($1.key) }
            spaces[name]?.keys = sorted.map(\.key)
            spaces[name]?.values = sorted.map(\.values)
        }
        return InMemoryDriver.State(spaces: spaces)
    }

    /// The backend operations that turn `before` into `after`: saves (markers first), then
    /// deletes (markers last).
    func changes(from before: InMemoryDriver.State, to after: InMemoryDriver.State) -> (saves: [(String, Data)], deletes: [String]) {
        var markerSaves: [(String, Data)] = [], saves: [(String, Data)] = [], deletes: [String] = [], markerDeletes: [String] = []
        for name in Set(before.spaces.keys).union(after.spaces.keys).sorted() {
            let old = before.spaces[name], new = after.spaces[name]
            if old == new { continue } // untouched keyspaces share storage: cheap
            if let new, old?.multiValue != new.multiValue { markerSaves.append((markerKey(name), Data([new.multiValue ? 1 : 0]))) }
            if new == nil { markerDeletes.append(markerKey(name)) }
            let from = old ?? InMemoryDriver.Space(multiValue: false), to = new ?? InMemoryDriver.Space(multiValue: false)
            let multi = to.multiValue
            let rewriteAll = old != nil && new != nil && old?.multiValue != new?.multiValue
            var i = 0, j = 0
            while i < from.keys.count || j < to.keys.count {
                if j == to.keys.count || (i < from.keys.count && from.keys[i].lexicographicallyPrecedes(to.keys[j])) {
                    deletes.append(entryKey(name, from.keys[i])); i += 1
                } else if i == from.keys.count || to.keys[j].lexicographicallyPrecedes(from.keys[i]) {
                    saves.append((entryKey(name, to.keys[j]), Self.encode(to.values[j], multiValue: multi))); j += 1
                } else {
                    if rewriteAll || from.values[i] != to.values[j] {
                        saves.append((entryKey(name, to.keys[j]), Self.encode(to.values[j], multiValue: multi)))
                    }
                    i += 1; j += 1
                }
            }
        }
        return (markerSaves + saves, deletes + markerDeletes)
    }
}
