import Foundation

enum EncoderFrameKind: UInt8 {
    case keyed, unkeyed, pending, filled

    package var tag: UInt8 { self == .keyed ? BinaryTag.object : BinaryTag.array }
}

/// An open container (or a pending super-encoder slot) whose header still needs backpatching.
struct EncoderFrame {
    var start: Int
    var count: Int
    var kind: EncoderFrameKind
}

/// The `Encoder` handed to `Encodable` implementations. Writes straight into one buffer; containers
/// must be used in nesting order (a container is closed once an outer container writes again).
final class BinaryEncoderImpl: Encoder {
    /// The output, read and changed through ``buffer`` (which first moves the pending entries to it).
    @exclusivity(unchecked) var output: [UInt8] = []
    /// Short keyed entries written since the output was last used (``appendShort(_:)``): the
    /// bytes that follow the output's, moved to it in one copy.
    @exclusivity(unchecked) var pending: UnsafeMutableRawPointer?
    @exclusivity(unchecked) var pendingCount = 0
    @exclusivity(unchecked) var frames = EncoderFrameStack()
    @exclusivity(unchecked) var keyStack: [any CodingKey] = []
    /// Coding-path length of the value currently being encoded.
    @exclusivity(unchecked) var depth = 0
    /// Number of composite values currently being encoded (recursion guard).
    @exclusivity(unchecked) var nesting = 0
    /// Start of the current value slot and the number of frames when it began.
    @exclusivity(unchecked) var slotStart = 0
    @exclusivity(unchecked) var slotFrameBase = 0
    @exclusivity(unchecked) var deferredError: (any Error)?
    @exclusivity(unchecked) var hook: (any BinaryReferenceEncoding)?
    @exclusivity(unchecked) var userInfo: [CodingUserInfoKey: Any] = [:]
    /// True while an encode is running (a `BinaryEncoder` reuses its impl when it is idle).
    @exclusivity(unchecked) var inUse = false
    /// Whether the hook stays set after an encode (the document layer's encoders, whose hook is
    /// their transaction's own); a public encoder's is dropped at the end.
    @exclusivity(unchecked) var keepsHook = false
    /// Whether `container(keyedBy:)` hands out reused containers (see
    /// ``ReusedKeyedContainers``), and those it keeps.
    @exclusivity(unchecked) var reusesContainers = false
    @exclusivity(unchecked) var reused = ReusedKeyedContainers<EncoderPosition>()
    /// Numbers this encoder's encodes: ``begin(hook:userInfo:)`` and ``end()`` each move it on.
    /// A container keeps the number it was made under and refuses to write under another (an
    /// `Encodable` that kept it and uses it later would write into another value's bytes).
    @exclusivity(unchecked) private(set) var encodeNumber: UInt64 = 0
    /// Scratch memory of the generated writer (``BinaryRecordWriter``), kept across encodes:
    /// fields are stored there with plain stores and moved to `output` in one copy.
    @exclusivity(unchecked) var scratch: UnsafeMutableRawPointer?
    @exclusivity(unchecked) var scratchCapacity = 0
    /// The root type last encoded through `encode(to:)` (see ``encodeRoot(_:)``).
    @exclusivity(unchecked) var compositeRoot: ObjectIdentifier?

    init() {}

    deinit {
        scratch?.deallocate()
        pending?.deallocate()
        frames.deallocate()
    }

    /// The output, pending entries included: every use of the output goes through here.
    var buffer: [UInt8] {
        @inline(__always) _read {
            if pendingCount != 0 { flushPending() }
            yield output
        }
        @inline(__always) _modify {
            if pendingCount != 0 { flushPending() }
            yield &output
        }
    }

    /// Replaces the scratch memory with a block of at least `minimum` bytes holding the first
    /// `keeping` bytes of the old one.
    func growScratch(minimum: Int, keeping: Int) -> (UnsafeMutableRawPointer, Int) {
        let capacity = max(minimum, scratchCapacity * 2, 256)
        let block = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
        if let scratch {
            if keeping > 0 { block.copyMemory(from: scratch, byteCount: keeping) }
            scratch.deallocate()
        }
        scratch = block
        scratchCapacity = capacity
        return (block, capacity)
    }

    /// Prepares for one top-level encode.
    func begin(hook: (any BinaryReferenceEncoding)?, userInfo: [CodingUserInfoKey: Any]) {
        inUse = true
        encodeNumber &+= 1
        // Kept between encodes when `keepsHook` (see `end()`): encoding with the same hook again
        // then stores nothing.
        if hook !== self.hook { self.hook = hook }
        // Most encoders have no user info: skip the dictionary copy and release then.
        if !userInfo.isEmpty || !self.userInfo.isEmpty { self.userInfo = userInfo }
        depth = 0
        nesting = 0
        slotStart = 0
        slotFrameBase = 0
        deferredError = nil
    }

    /// Releases per-encode state but keeps allocated capacity for reuse.
    /// The hook stays only when `keepsHook` (a document layer encoder, owned by the same
    /// transaction as its hook, which refers back to it unowned: no cycle).
    func end() {
        encodeNumber &+= 1
        if !keepsHook, hook != nil { hook = nil }
        if !userInfo.isEmpty { userInfo = [:] }
        deferredError = nil
        if !frames.isEmpty { frames.removeAll() }
        if !keyStack.isEmpty { keyStack.removeAll(keepingCapacity: true) }
        if scratchCapacity > Self.scratchKept, let scratch { // one large record does not pin its size
            scratch.deallocate()
            self.scratch = nil
            scratchCapacity = 0
        }
        inUse = false
    }

    /// Scratch memory larger than this is freed at the end of an encode.
    static var scratchKept: Int { 64 * 1024 }

    /// What a container made in an encode that has ended throws when it is used.
    static func staleContainer() -> EncodingError {
        EncodingError.invalidValue("container", EncodingError.Context(codingPath: [], debugDescription:
            "an encoding container was used after the encode that made it ended (an Encodable kept it): use containers only inside encode(to:)"))
    }

    var codingPath: [any CodingKey] { path(depth) }

    func path(_ d: Int) -> [any CodingKey] {
        d >= keyStack.count ? keyStack : Array(keyStack[..<d])
    }

    func path<K: CodingKey>(_ d: Int, appending key: K) -> [any CodingKey] {
        var p = path(d)
        if K.self != NoKey.self { p.append(key) }
        return p
    }

    // MARK: Encoder

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let (f, s) = openSlotContainer(.keyed)
        if reusesContainers { return reusedContainer(Key.self, frame: f, start: s) }
        return KeyedEncodingContainer(BinaryKeyedEncodingContainer<Key>(impl: self, frame: f, start: s, depth: depth))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let (f, s) = openSlotContainer(.unkeyed)
        return BinaryUnkeyedEncodingContainer(impl: self, start: s, frame: Int32(f), depth: Int32(depth))
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        BinarySingleValueEncodingContainer(impl: self, start: slotStart, pendingFrame: -1, depth: Int32(depth))
    }

    // MARK: Root

    func encodeRoot<T: Encodable>(_ value: T) throws {
        buffer.append(BinaryFormat.version)
        // A document layer's or a reused encoder encodes one type after another: the type
        // checks of `encodeFast` are made once per root type written through `encode(to:)`.
        if compositeRoot != ObjectIdentifier(T.self) {
            if encodeFast(value) { return } // a scalar: no frame, no deferred error
            compositeRoot = ObjectIdentifier(T.self)
        }
        try encodeComposite(value, key: NoKey(), parentDepth: 0)
        closeFrames(downTo: 0)
        if let deferredError { throw deferredError }
    }

    // MARK: Frames

    func fail(_ message: String) {
        if deferredError == nil {
            deferredError = EncodingError.invalidValue(
                message, EncodingError.Context(codingPath: codingPath, debugDescription: message))
        }
    }

    /// Opens (or re-opens) the container for the current value slot.
    func openSlotContainer(_ kind: EncoderFrameKind) -> (Int, Int) {
        if frames.count > slotFrameBase && frames[slotFrameBase].start == slotStart {
            if frames[slotFrameBase].kind == kind {
                closeFrames(downTo: slotFrameBase + 1)
                return (slotFrameBase, slotStart)
            }
            fail("Requested a different kind of container for a value that already has one.")
            return (-1, -1)
        }
        guard buffer.count == slotStart && frames.count == slotFrameBase else {
            fail("Requested a container for a value that was already encoded.")
            return (-1, -1)
        }
        let s = BinaryWriter.beginContainer(kind.tag, &buffer)
        frames.append(EncoderFrame(start: s, count: 0, kind: kind))
        return (frames.count - 1, s)
    }

    /// Converts a pending super-encoder slot into a container.
    func openPending(_ frame: Int, _ start: Int, _ kind: EncoderFrameKind) -> (Int, Int) {
        guard frame >= 0, frame < frames.count, frames[frame].start == start else {
            fail("A super encoder was used after its parent container continued encoding.")
            return (-1, -1)
        }
        closeFrames(downTo: frame + 1)
        let current = frames[frame].kind
        if current == .pending {
            guard buffer.count == start else {
                fail("Super encoder slot already written.")
                return (-1, -1)
            }
            _ = BinaryWriter.beginContainer(kind.tag, &buffer)
            frames[frame].kind = kind
            return (frame, start)
        }
        if current == kind { return (frame, start) }
        fail("Requested a different kind of container for a super encoder.")
        return (-1, -1)
    }

    @inline(__always)
    func prepareWrite(_ frame: Int, _ start: Int) throws {
        // `frame` is -1 for a container that failed to open (a misbehaving `Codable`
        // conformance): the slow path refuses it.
        if frame >= 0 && frame + 1 == frames.count && frames[frame].start == start { return }
        try prepareWriteSlow(frame, start)
    }

    func prepareWriteSlow(_ frame: Int, _ start: Int) throws {
        guard frame >= 0, frame < frames.count, frames[frame].start == start,
              frames[frame].kind == .keyed || frames[frame].kind == .unkeyed
        else {
            throw EncodingError.invalidValue(
                "container", EncodingError.Context(
                    codingPath: codingPath,
                    debugDescription: "Container used after a later sibling was written; BinaryEncoder requires containers to be used in nesting order."))
        }
        closeFrames(downTo: frame + 1)
    }

    func closeFrames(downTo base: Int) {
        while frames.count > base {
            let f = frames.removeLast()
            switch f.kind {
            case .keyed, .unkeyed:
                BinaryWriter.endContainer(start: f.start, count: f.count, &buffer)
            case .pending:
                BinaryWriter.emptyObject(&buffer)
            case .filled:
                break
            }
        }
    }

    @inline(__always)
    func beginEntry<K: CodingKey>(_ frame: Int, _ start: Int, _ key: K) throws {
        try beginEntryWithoutKey(frame, start)
        BinaryWriter.codingKey(key, &buffer)
    }

    /// ``beginEntry(_:_:_:)`` for a caller that writes the key itself.
    @inline(__always)
    func beginEntryWithoutKey(_ frame: Int, _ start: Int) throws {
        try prepareWrite(frame, start)
        frames[frame].count += 1
    }

    @inline(__always)
    func beginElement(_ frame: Int, _ start: Int) throws -> Int {
        try prepareWrite(frame, start)
        let i = frames[frame].count
        frames[frame].count = i + 1
        return i
    }

    func pushKey<K: CodingKey>(_ key: K, at d: Int) {
        if keyStack.count > d { keyStack.removeLast(keyStack.count - d) }
        keyStack.append(key)
    }

    /// Writes the key/element header, then opens a nested container in that slot.
    func openNested<K: CodingKey>(_ key: K, depth: Int, kind: EncoderFrameKind) -> (Int, Int) {
        guard depth < BinaryFormat.maxDepth else {
            fail("Nesting deeper than \(BinaryFormat.maxDepth) levels.")
            return (-1, -1)
        }
        pushKey(key, at: depth)
        let s = BinaryWriter.beginContainer(kind.tag, &buffer)
        frames.append(EncoderFrame(start: s, count: 0, kind: kind))
        return (frames.count - 1, s)
    }

    func makeSuperEncoder<K: CodingKey>(_ key: K, depth: Int) -> any Encoder {
        pushKey(key, at: depth)
        frames.append(EncoderFrame(start: buffer.count, count: 0, kind: .pending))
        return BinarySuperEncoder(impl: self, frame: frames.count - 1, start: buffer.count, depth: depth + 1)
    }

    func deadSuperEncoder(depth: Int) -> any Encoder {
        BinarySuperEncoder(impl: self, frame: -1, start: -1, depth: depth)
    }

    /// Validates a single-value write that is not the trivial case.
    func singleValueSlow(_ start: Int, _ pendingFrame: Int) throws {
        if pendingFrame >= 0, pendingFrame < frames.count, frames[pendingFrame].start == start,
           frames[pendingFrame].kind == .pending {
            closeFrames(downTo: pendingFrame + 1)
            if buffer.count == start {
                frames[pendingFrame].kind = .filled
                return
            }
        }
        throw EncodingError.invalidValue(
            "value", EncodingError.Context(
                codingPath: codingPath,
                debugDescription: "Single value container used after a value was already encoded in its slot."))
    }

    // MARK: Values

    /// Encodes a value below the root: fast path for scalars, then reference hook, then `encode(to:)`.
    @inline(__always)
    func encodeValue<T: Encodable, K: CodingKey>(_ value: T, key: K, parentDepth: Int) throws {
        if encodeFast(value) { return }
        if let hook, let ref = try hook.reference(for: value) {
            try writeReference(ref, path: path(parentDepth, appending: key))
            return
        }
        try encodeComposite(value, key: key, parentDepth: parentDepth)
    }

    func writeReference(_ ref: (collection: String, id: DocumentValue), path: [any CodingKey]) throws {
        switch ref.id {
        case .string, .int, .uint, .uuid: break
        default:
            throw EncodingError.invalidValue(
                ref.id, EncodingError.Context(codingPath: path, debugDescription: "Reference ids must be string, int, uint or uuid."))
        }
        buffer.append(BinaryTag.reference)
        BinaryWriter.stringPayload(ref.collection, &buffer)
        ref.id.write(into: &buffer)
    }

    func encodeComposite<T: Encodable, K: CodingKey>(_ value: T, key: K, parentDepth: Int) throws {
        var newDepth = parentDepth
        if K.self != NoKey.self {
            pushKey(key, at: parentDepth)
            newDepth += 1
        }
        guard nesting < BinaryFormat.maxDepth else {
            throw EncodingError.invalidValue( // the type, not the value: errors never carry stored values
                "\(T.self)", EncodingError.Context(codingPath: path(newDepth), debugDescription: "Nesting deeper than \(BinaryFormat.maxDepth) levels."))
        }
        let savedDepth = depth, savedStart = slotStart, savedBase = slotFrameBase
        depth = newDepth
        slotStart = buffer.count
        slotFrameBase = frames.count
        nesting += 1
        defer {
            depth = savedDepth
            slotStart = savedStart
            slotFrameBase = savedBase
            nesting -= 1
        }
        try value.encode(to: self)
        closeFrames(downTo: slotFrameBase)
        if buffer.count == slotStart { BinaryWriter.emptyObject(&buffer) }
    }

    @inline(__always)
    func encodeFast<T: Encodable>(_ value: T) -> Bool {
        if T.self == String.self {
            BinaryWriter.string(unsafeBitCast(value, to: String.self), tag: BinaryTag.string, &buffer)
            return true
        }
        if T.self == Int.self {
            BinaryWriter.signed(Int64(unsafeBitCast(value, to: Int.self)), &buffer)
            return true
        }
        if T.self == Bool.self {
            BinaryWriter.bool(unsafeBitCast(value, to: Bool.self), &buffer)
            return true
        }
        if T.self == Double.self {
            BinaryWriter.double(unsafeBitCast(value, to: Double.self), &buffer)
            return true
        }
        return encodeFastRare(value)
    }
}
