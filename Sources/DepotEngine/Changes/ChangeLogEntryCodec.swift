import Foundation

/// The bytes of a change-log entry written and read by hand: exactly what `BinaryEncoder`
/// writes for the `Codable` ``ChangeLog/Entry`` (a test holds the two equal), so that a watcher
/// of any version reads what any writer appends, without the keyed containers. Each logged
/// write encodes one entry and every watcher decodes it: through `Codable`, encoding an entry
/// of one document cost the writer about 21k instructions, and decoding it was most of the
/// 22k per write the watcher saved (callgrind, PostgreSQL's `trace watched-writes`).
///
/// Layout (Depot binary format, version 1): the version byte, then an object of `writer`
/// (string), `time` (double) and `parts` (an array of objects of `alias`, `collection`, `kind`
/// (strings), `created`, `updated` and `deleted` (arrays of bytes)), in that order.
extension ChangeLog.Entry {
    /// The entry's bytes, as `BinaryEncoder().encode(self)` writes them.
    package func encoded() -> [UInt8] {
        func room(_ keys: [Data]) -> Int { keys.reduce(0) { $0 + $1.count + 3 } }
        var size = 32 + writer.utf8.count
        for part in parts {
            size += 64 + part.alias.utf8.count + part.collection.utf8.count + room(part.created) + room(part.updated) + room(part.deleted)
        }
        var b: [UInt8] = []
        b.reserveCapacity(size)
        b.append(BinaryFormat.version)
        let root = BinaryWriter.beginContainer(BinaryTag.object, &b)
        BinaryWriter.stringKey("writer", &b)
        BinaryWriter.string(writer, tag: BinaryTag.string, &b)
        BinaryWriter.stringKey("time", &b)
        BinaryWriter.double(time, &b)
        BinaryWriter.stringKey("parts", &b)
        let array = BinaryWriter.beginContainer(BinaryTag.array, &b)
        for part in parts {
            let object = BinaryWriter.beginContainer(BinaryTag.object, &b)
            BinaryWriter.stringKey("alias", &b)
            BinaryWriter.string(part.alias, tag: BinaryTag.string, &b)
            BinaryWriter.stringKey("collection", &b)
            BinaryWriter.string(part.collection, tag: BinaryTag.string, &b)
            BinaryWriter.stringKey("kind", &b)
            BinaryWriter.string(part.kind.rawValue, tag: BinaryTag.string, &b)
            Self.write(part.created, named: "created", &b)
            Self.write(part.updated, named: "updated", &b)
            Self.write(part.deleted, named: "deleted", &b)
            BinaryWriter.endContainer(start: object, count: 6, &b)
        }
        BinaryWriter.endContainer(start: array, count: parts.count, &b)
        BinaryWriter.endContainer(start: root, count: 3, &b)
        return b
    }

    /// Appends the field `name`: an array of `keys`, each as bytes.
    private static func write(_ keys: [Data], named name: String, _ b: inout [UInt8]) {
        BinaryWriter.stringKey(name, &b)
        let list = BinaryWriter.beginContainer(BinaryTag.array, &b)
        for key in keys { key.withUnsafeBytes { BinaryWriter.bytes($0, &b) } }
        BinaryWriter.endContainer(start: list, count: keys.count, &b)
    }

    /// Decodes an entry: the layout ``encoded()`` writes read directly, anything else (fields in
    /// another order, more fields, malformed bytes) through `Codable`, which reads any order
    /// and reports what is wrong.
    /// - Throws: What `BinaryDecoder().decode(ChangeLog.Entry.self, from:)` throws.
    package static func decode(_ bytes: UnsafeRawBufferPointer) throws -> ChangeLog.Entry {
        if let entry = try? decodeInLayout(bytes) { return entry }
        return try BinaryDecoder().decode(ChangeLog.Entry.self, from: bytes)
    }

    /// The entry in the layout ``encoded()`` writes; nil (or a thrown error) for any other bytes.
    package static func decodeInLayout(_ bytes: UnsafeRawBufferPointer) throws -> ChangeLog.Entry? {
        let r = BinaryReader(bytes)
        var p = try BinaryReader.checkHeader(r)
        /// The header of a container with tag `tag` at p, expecting `count` entries (any when nil).
        func container(_ tag: UInt8, count: Int?, minEntrySize: Int) throws -> (count: Int, end: Int)? {
            guard try r.tag(at: p) == tag else { return nil }
            p += 1
            let header = try r.containerHeader(&p, minEntrySize: minEntrySize)
            if let count, header.count != count { return nil }
            return header
        }
        /// Whether the key at p is `name` (moved past it when it is).
        func key(_ name: StaticString) throws -> Bool {
            var q = p
            guard case .string(let start, let n) = try r.key(&q), n == name.utf8CodeUnitCount,
                  BinaryReader.bytesEqual(r.base + start, name.utf8Start, n) else { return false }
            p = q
            return true
        }
        func string() throws -> String? {
            guard try r.tag(at: p) == BinaryTag.string else { return nil }
            p += 1
            return try r.stringPayload(&p)
        }
        func keys(_ end: Int) throws -> [Data]? {
            guard let list = try container(BinaryTag.array, count: nil, minEntrySize: 2) else { return nil }
            var keys: [Data] = []
            keys.reserveCapacity(list.count)
            for _ in 0..<list.count {
                guard try r.tag(at: p) == BinaryTag.bytes else { return nil }
                p += 1
                let n = try r.length(&p)
                keys.append(Data(bytes: r.base + p, count: n))
                p += n
            }
            return p == list.end && p <= end ? keys : nil
        }
        guard let root = try container(BinaryTag.object, count: 3, minEntrySize: 2), root.end == r.count,
              try key("writer"), let writer = try string(),
              try key("time"), try r.tag(at: p) == BinaryTag.double else { return nil }
        p += 1
        let time = Double(bitPattern: try r.fixed64(&p))
        guard try key("parts"), let array = try container(BinaryTag.array, count: nil, minEntrySize: 3) else { return nil }
        var parts: [ChangeLog.Part] = []
        parts.reserveCapacity(array.count)
        for _ in 0..<array.count {
            guard let object = try container(BinaryTag.object, count: 6, minEntrySize: 2),
                  try key("alias"), let alias = try string(),
                  try key("collection"), let collection = try string(),
                  try key("kind"), let kindName = try string(), let kind = IDKind(rawValue: kindName),
                  try key("created"), let created = try keys(object.end),
                  try key("updated"), let updated = try keys(object.end),
                  try key("deleted"), let deleted = try keys(object.end), p == object.end else { return nil }
            var part = ChangeLog.Part(alias: alias, collection: collection, kind: kind)
            part.created = created
            part.updated = updated
            part.deleted = deleted
            parts.append(part)
        }
        guard p == array.end, p == root.end else { return nil }
        return ChangeLog.Entry(writer: writer, time: time, parts: parts)
    }
}
