import Foundation

/// Per-depth memo of where the last keyed lookup stopped.
struct KeyHint {
    var owner: Int
    var offset: Int
    var index: Int
}

/// The `Decoder` handed to `Decodable` implementations.
final class BinaryDecoderImpl: Decoder {
    @exclusivity(unchecked) var reader: BinaryReader
    @exclusivity(unchecked) var resolver: (any BinaryReferenceDecoding)?
    @exclusivity(unchecked) var userInfo: [CodingUserInfoKey: Any]
    /// True while a decode is running (a `BinaryDecoder` reuses its impl when it is idle).
    @exclusivity(unchecked) var inUse = false
    /// The string a record reader shares for fields with its bytes (``BinaryRecordReader/share(_:bytes:)``).
    var known = ""
    /// The UTF-8 of ``known`` for keyed containers (``share(_:bytes:)``): a string value with
    /// these bytes decodes as `known`, without a copy. `knownCount` is -1 when there is none.
    @exclusivity(unchecked) var knownBytes: UnsafeRawPointer?
    @exclusivity(unchecked) var knownCount = -1
    /// Whether the resolver stays set after a decode (the document layer's decoders, whose
    /// resolver is their transaction's own hook); a public decoder's is dropped at the end.
    @exclusivity(unchecked) var keepsResolver = false
    /// Offset of the value currently being decoded.
    @exclusivity(unchecked) var offset: Int
    /// Coding-path length of the value currently being decoded.
    @exclusivity(unchecked) var depth: Int
    @exclusivity(unchecked) var nesting: Int
    @exclusivity(unchecked) var keyStack: [any CodingKey]
    /// Lookup hint for depth 0 (kept inline to avoid an allocation for flat documents).
    @exclusivity(unchecked) var hint0 = KeyHint(owner: -1, offset: 0, index: 0)
    /// Lookup hints for depths 1...
    @exclusivity(unchecked) var hints: [KeyHint] = []
    /// Whether `container(keyedBy:)` hands out reused containers (only a decoder that a
    /// ``BinaryDecoder`` owns: see ``ReusedKeyedContainers``), and those it keeps.
    @exclusivity(unchecked) var reusesContainers = false
    @exclusivity(unchecked) var reused = ReusedKeyedContainers<ObjectBounds>()
    /// The root type last decoded through `init(from:)` (see ``decodeRoot(_:_:)``).
    @exclusivity(unchecked) var compositeRoot: ObjectIdentifier?
    /// Numbers this decoder's decodes and says whether it is alive (see ``DecoderLifeCell``):
    /// ``begin(reader:resolver:offset:)`` and ``end()`` each move its number on. A container
    /// keeps the number it was made under and refuses to read under another (``isCurrent(_:)``):
    /// its offsets point into that decode's bytes, which may be gone when a `Decodable` kept the
    /// container and uses it later. A super decoder shares its root decoder's cell.
    let cell: DecoderLifeCell
    /// For a decoder made by `superDecoder()`: the decoder whose bytes it reads (its containers
    /// are current while that one's decode is). Nil for a decoder of its own.
    let root: BinaryDecoderImpl?
    /// The super decoders made in the running decode, kept until it ends: a container of one
    /// holds its decoder unretained, and may outlive the `Decoder` it came from within the
    /// decode (see ``DecoderLifeCell``).
    @exclusivity(unchecked) var superDecoders: [BinaryDecoderImpl] = []

    init(reader: BinaryReader, resolver: (any BinaryReferenceDecoding)?, userInfo: [CodingUserInfoKey: Any],
         offset: Int, keyStack: [any CodingKey], nesting: Int, root: BinaryDecoderImpl? = nil) {
        self.reader = reader
        self.root = root
        cell = root?.cell ?? DecoderLifeCell.take()
        // Kept between decodes when `keepsResolver` (see `end()`): decoding with the same
        // resolver again then stores nothing.
        if resolver !== self.resolver { self.resolver = resolver }
        self.userInfo = userInfo
        self.offset = offset
        self.keyStack = keyStack
        self.depth = keyStack.count
        self.nesting = nesting
    }

    deinit {
        if root == nil { cell.give() }
    }

    /// An idle decoder to be prepared with `begin`.
    convenience init() {
        self.init(reader: BinaryReader(UnsafeRawBufferPointer(start: nil, count: 0)), resolver: nil, userInfo: [:],
                  offset: 0, keyStack: [], nesting: 0)
    }

    /// Prepares for one top-level decode.
    func begin(reader: BinaryReader, resolver: (any BinaryReferenceDecoding)?, userInfo: [CodingUserInfoKey: Any], offset: Int) {
        begin(reader: reader, resolver: resolver, offset: offset)
        // Most decoders have no user info: skip the dictionary copy and release then.
        if !userInfo.isEmpty || !self.userInfo.isEmpty { self.userInfo = userInfo }
    }

    /// ``begin(reader:resolver:userInfo:offset:)`` leaving the user info to the caller.
    @inline(__always)
    func begin(reader: BinaryReader, resolver: (any BinaryReferenceDecoding)?, offset: Int) {
        inUse = true
        cell.decodeNumber &+= 1
        self.reader = reader
        // Kept between decodes when `keepsResolver` (see `end()`): decoding with the same
        // resolver again then stores nothing.
        if resolver !== self.resolver { self.resolver = resolver }
        self.offset = offset
        depth = 0
        nesting = 0
        hint0 = KeyHint(owner: -1, offset: 0, index: 0)
    }

    /// Drops per-decode state, keeping allocated capacity. The resolver stays only when
    /// `keepsResolver` (a document layer decoder, owned by the same transaction as its resolver,
    /// which refers back to it unowned: no cycle).
    func end() {
        cell.decodeNumber &+= 1
        if !superDecoders.isEmpty {
            // A `Decoder` a `Decodable` kept reads nothing of the bytes that may now be gone.
            for decoder in superDecoders { decoder.reader = BinaryReader(UnsafeRawBufferPointer(start: nil, count: 0)) }
            superDecoders.removeAll(keepingCapacity: true)
        }
        reader = BinaryReader(UnsafeRawBufferPointer(start: nil, count: 0))
        if !keepsResolver, resolver != nil { resolver = nil }
        if !userInfo.isEmpty { userInfo = [:] }
        if !keyStack.isEmpty { keyStack.removeAll(keepingCapacity: true) }
        if !hints.isEmpty { hints.removeAll(keepingCapacity: true) }
        if !known.isEmpty { known = "" }
        if knownCount >= 0 {
            knownCount = -1
            knownBytes = nil
        }
        inUse = false
    }

    /// Makes string values with exactly `bytes` (the UTF-8 of `string`, valid until ``end()``)
    /// decode as `string`.
    func share(_ string: String, bytes: UnsafeRawBufferPointer) {
        guard let start = bytes.baseAddress else { return }
        known = string
        knownBytes = start
        knownCount = bytes.count
    }

    /// The string of `n` bytes at `p` (bounds checked): ``known`` when those are its bytes.
    @inline(__always)
    package func string(_ p: Int, _ n: Int) throws -> String {
        if n == knownCount, let knownBytes, BinaryReader.bytesEqual(reader.base + p, knownBytes, n) { return known }
        return try reader.makeString(p, n)
    }

    /// The number containers made now keep (see ``cell``): the root decoder's (a super decoder
    /// shares its cell).
    @inline(__always)
    var currentNumber: UInt64 { cell.decodeNumber }

    /// Whether a container made under `number` may read now.
    @inline(__always)
    func isCurrent(_ number: UInt64) -> Bool { number == currentNumber }

    /// What a container made in a decode that has ended throws when it is used.
    static func staleContainer() -> DecodingError {
        DecodingError.dataCorrupted(DecodingError.Context(codingPath: [], debugDescription:
            "a decoding container was used after the decode that made it ended (a Decodable kept it): use containers only inside init(from:)"))
    }

    var codingPath: [any CodingKey] { path(depth) }

    func path(_ d: Int) -> [any CodingKey] {
        d >= keyStack.count ? keyStack : Array(keyStack[..<d])
    }

    func path(_ d: Int, _ key: (any CodingKey)?) -> [any CodingKey] {
        var p = path(d)
        if let key { p.append(key) }
        return p
    }

    func pushKey(_ key: any CodingKey, at d: Int) throws {
        guard d < BinaryFormat.maxDepth else { throw BinaryCodecError.nestingTooDeep(limit: BinaryFormat.maxDepth) }
        if keyStack.count > d { keyStack.removeLast(keyStack.count - d) }
        keyStack.append(key)
    }

    // MARK: Decoder

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        if reusesContainers { return try reusedContainer(Key.self) }
        return KeyedDecodingContainer(try openKeyed(Key.self, at: offset, depth: depth))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try openUnkeyed(at: offset, depth: depth)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        BinarySingleValueDecodingContainer(impl: self, at: offset, depth: depth)
    }

    func openKeyed<Key: CodingKey>(_: Key.Type, at p: Int, depth: Int) throws -> BinaryKeyedDecodingContainer<Key> {
        let b = try objectBounds(Key.self, at: p, depth: depth)
        return BinaryKeyedDecodingContainer<Key>(impl: self, entries: b.entries, end: b.end, entryCount: b.count, depth: depth)
    }

    /// The entries of the object at `p` (a type mismatch when there is none).
    @inline(__always)
    func objectBounds<Key: CodingKey>(_: Key.Type, at p: Int, depth: Int) throws -> ObjectBounds {
        let t = try reader.tag(at: p)
        guard t == BinaryTag.object else {
            throw mismatch(KeyedDecodingContainer<Key>.self, t, depth, nil)
        }
        var q = p + 1
        let (n, end) = try reader.containerHeader(&q, minEntrySize: 2)
        return ObjectBounds(entries: q, end: end, count: n, decode: currentNumber)
    }

    func openUnkeyed(at p: Int, depth: Int) throws -> BinaryUnkeyedDecodingContainer {
        let t = try reader.tag(at: p)
        guard t == BinaryTag.array else {
            throw mismatch([Any].self, t, depth, nil)
        }
        var q = p + 1
        let (n, _) = try reader.containerHeader(&q, minEntrySize: 1)
        return BinaryUnkeyedDecodingContainer(
            impl: self, pos: UInt32(truncatingIfNeeded: q), elementCount: UInt32(truncatingIfNeeded: n),
            index: 0, depth: UInt16(truncatingIfNeeded: depth), decode: UInt16(truncatingIfNeeded: currentNumber))
    }

    func makeSuperDecoder(at p: Int, depth: Int, key: any CodingKey) -> any Decoder {
        let top = root ?? self
        let decoder = BinaryDecoderImpl(reader: reader, resolver: resolver, userInfo: userInfo,
                                        offset: p, keyStack: path(depth, key), nesting: nesting + 1, root: top)
        // Kept until the decode ends (`end()`), as its containers hold it unretained.
        top.superDecoders.append(decoder)
        return decoder
    }

    // MARK: Keyed lookup (find: BinaryDecoderImpl+Lookup.swift)

    func allKeys<K: CodingKey>(_: K.Type, entries: Int, end: Int, count: Int) throws -> [K] {
        var keys: [K] = []
        var p = entries
        for _ in 0..<count {
            let stored = try reader.key(&p)
            switch stored {
            case .string(let s, let n):
                if let k = K(stringValue: try reader.makeString(s, n)) { keys.append(k) }
            case .int(let v):
                if let k = K(intValue: Int(v)) ?? K(stringValue: String(v)) { keys.append(k) }
            }
            p = try reader.skipValue(at: p)
            guard p <= end else { throw BinaryCodecError.malformed(offset: p, reason: "value exceeds its object") }
        }
        return keys
    }

    // MARK: Values

    /// Decodes a `T` at `p`. With `advance`, `p` is moved past the value. `key` is the value's
    /// key (``NoKey`` for none): generic, so that it becomes an existential only where a coding
    /// path needs it (a composite value's, or an error's), not on every call.
    @inline(__always)
    func decodeValue<T: Decodable, K: CodingKey>(_: T.Type, _ p: inout Int, _ depth: Int, _ key: K, advance: Bool) throws -> T {
        let t = T.self
        if t == String.self { return unsafeBitCast(try readString(&p, depth, anyKey(key)), to: T.self) }
        if t == Int.self { return unsafeBitCast(try readInteger(Int.self, &p, depth, anyKey(key)), to: T.self) }
        if t == Bool.self { return unsafeBitCast(try readBool(&p, depth, anyKey(key)), to: T.self) }
        if t == Double.self { return unsafeBitCast(try readDouble(&p, depth, anyKey(key)), to: T.self) }
        if let kind = FastKind.of(T.self) { return try decodeFast(kind, T.self, &p, depth, key, advance: advance) }
        return try decodeComposite(T.self, &p, depth, key, advance: advance)
    }

    /// Decodes the root value, a `T`, at `p`, and moves `p` past it: ``decodeValue(_:_:_:_:advance:)``
    /// without its checks for the types read natively when `T` is the root type last decoded
    /// through `init(from:)` (a document layer's decoder reads one type after another).
    func decodeRoot<T: Decodable>(_: T.Type, _ p: inout Int) throws -> T {
        if compositeRoot != ObjectIdentifier(T.self) {
            let t = T.self
            if t == String.self || t == Int.self || t == Bool.self || t == Double.self || FastKind.of(T.self) != nil {
                return try decodeValue(T.self, &p, 0, NoKey(), advance: true)
            }
            compositeRoot = ObjectIdentifier(T.self)
        }
        return try decodeComposite(T.self, &p, 0, NoKey(), advance: true)
    }

    /// `key` as the optional key of a coding path: nil for ``NoKey``.
    @inline(__always)
    func anyKey<K: CodingKey>(_ key: K) -> (any CodingKey)? { K.self == NoKey.self ? nil : key }

    @inline(__always)
    func decodeComposite<T: Decodable, K: CodingKey>(_: T.Type, _ p: inout Int, _ depth: Int, _ key: K, advance: Bool) throws -> T {
        let t = try reader.tag(at: p)
        // An optional holding a reference decodes through `Optional.init(from:)`, which reads
        // the wrapped type: the reference is resolved as that type.
        if t == BinaryTag.reference && !(T.self is any OptionalValue.Type) {
            return try readSlow(T.self, &p, depth, anyKey(key), t)
        }
        let next = advance ? try reader.skipValueInline(at: p) : p
        var newDepth = depth
        if K.self != NoKey.self {
            try pushKey(key, at: depth)
            newDepth += 1
        }
        guard nesting < BinaryFormat.maxDepth else { throw BinaryCodecError.nestingTooDeep(limit: BinaryFormat.maxDepth) }
        let savedOffset = offset, savedDepth = self.depth
        offset = p
        self.depth = newDepth
        nesting += 1
        defer {
            offset = savedOffset
            self.depth = savedDepth
            nesting -= 1
        }
        let value = try T(from: self)
        p = next
        return value
    }

    func resolveReference<T: Decodable>(_: T.Type, _ p: inout Int, _ depth: Int, _ key: (any CodingKey)?) throws -> T {
        var q = p + 1
        let collection = try reader.stringPayload(&q)
        let id = try reader.documentValue(&q, depth: BinaryFormat.maxDepth - 1)
        guard let resolver else {
            // Neither the referenced collection nor the ID is shown: both are bytes of the record.
            throw DecodingError.typeMismatch(T.self, DecodingError.Context(
                codingPath: path(depth, key),
                debugDescription: "Found a reference but no referenceResolver is configured."))
        }
        let value: T
        do {
            value = try resolver.resolve(T.self, collection: collection, id: id)
        } catch let error as DepotError where error.code == .unknownReferenceType && error.fieldPath == nil {
            // The resolver does not know where the reference lies: this field does.
            throw DepotError(code: error.code, message: error.message, fieldPath: renderCodingPath(path(depth, key)))
        }
        p = q
        return value
    }

    func mismatch<T>(_: T.Type, _ tag: UInt8, _ depth: Int, _ key: (any CodingKey)?) -> any Error {
        mismatch(type: T.self, tag, path: path(depth, key))
    }

    func mismatch<T>(_: T.Type, _ tag: UInt8, path ctxPath: [any CodingKey]) -> any Error {
        mismatch(type: T.self, tag, path: ctxPath)
    }

    func mismatch(type: Any.Type, _ tag: UInt8, path ctxPath: [any CodingKey]) -> any Error {
        if tag == BinaryTag.null {
            return DecodingError.valueNotFound(type, DecodingError.Context(
                codingPath: ctxPath, debugDescription: "Expected \(type) value but found null instead."))
        }
        return DecodingError.typeMismatch(type, DecodingError.Context(
            codingPath: ctxPath, debugDescription: "Expected to decode \(type) but found \(BinaryTag.name(tag)) instead."))
    }

    func corrupted(_ message: String, _ depth: Int, _ key: (any CodingKey)?) -> any Error {
        DecodingError.dataCorrupted(DecodingError.Context(codingPath: path(depth, key), debugDescription: message))
    }

    /// Slow path shared by primitive readers: resolves references, otherwise reports a mismatch.
    func readSlow<T: Decodable>(_: T.Type, _ p: inout Int, _ depth: Int, _ key: (any CodingKey)?, _ tag: UInt8) throws -> T {
        if tag == BinaryTag.reference {
            if T.self == DocumentValue.self {
                return unsafeBitCast(try reader.documentValue(&p, depth: nesting), to: T.self)
            }
            return try resolveReference(T.self, &p, depth, key)
        }
        throw mismatch(T.self, tag, depth, key)
    }
}
