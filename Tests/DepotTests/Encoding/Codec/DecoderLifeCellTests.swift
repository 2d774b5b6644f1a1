import CDepotAtomic
@testable import DepotEngine
import Foundation
import Testing

/// Keyed containers hold their decoder unretained and read it only when its life cell says
/// they may (``DecoderLifeCell``): these tests reuse cells on purpose. Those that rely on a
/// thread's free list run on a thread of their own (`onFreshThread`), whose list starts empty
/// (a thread keeps the cells given back on it and hands out the last one first).
@Suite struct DecoderLifeCellTests {
    @Test func aCellGivenBackIsTakenAgainWithItsNumbersMovedOn() throws {
        try onFreshThread {
            let cell = DecoderLifeCell.take()
            cell.decodeNumber &+= 5
            let (number, life) = (cell.decodeNumber, cell.life)
            cell.give()
            #expect(cdepot_cells_kept_by_this_thread() == 1)
            let again = DecoderLifeCell.take()
            defer { again.give() }
            #expect(again.words == cell.words)
            #expect(again.decodeNumber > number)
            #expect(again.life > life)
        }
    }

    @Test func aThreadsKeptCellsAreSharedAtItsExit() throws {
        let given = try onFreshThread { () -> [UnsafeMutablePointer<UInt64>] in
            let cells = (0..<8).map { _ in DecoderLifeCell.take() }
            for cell in cells { cell.give() }
            #expect(cdepot_cells_kept_by_this_thread() == 8)
            return cells.map(\.words)
        }
        // The thread's exit moves its 8 cells to the shared list; decoders made meanwhile on
        // other threads (tests run in parallel) may take some, one at a time: at least one of
        // them is seen there.
        let deadline = Date().addingTimeInterval(10)
        var seen = false
        while !seen && Date() < deadline {
            seen = given.contains { cdepot_cells_shared_contains($0) == 1 }
            if !seen { Thread.sleep(forTimeInterval: 0.001) }
        }
        #expect(seen, "the exited thread's cells are on the shared list")
    }

    /// Cells taken on one thread and given back on another, by several threads at once (also
    /// run under ThreadSanitizer in CI): every cell handed out is held by one taker at a time.
    @Test func cellsMoveBetweenThreads() throws {
        let threads = 4, rounds = 2_000
        let handOff = NSLockedBox<[UnsafeMutablePointer<UInt64>]>([])
        let held = NSLockedBox<Set<UnsafeMutablePointer<UInt64>>>([])
        let doubles = NSLockedBox(0)
        let done = DispatchGroup()
        for _ in 0..<threads {
            done.enter()
            Thread {
                for round in 0..<rounds {
                    let cell = DecoderLifeCell.take()
                    if !held.withLock({ $0.insert(cell.words).inserted }) { doubles.withLock { $0 += 1 } }
                    cell.decodeNumber &+= 1
                    // Every other cell is given back by whichever thread takes it from the hand-off.
                    if round % 2 == 0 {
                        handOff.withLock { $0.append(cell.words) }
                    } else {
                        held.withLock { _ = $0.remove(cell.words) }
                        cell.give()
                    }
                    if let other = handOff.withLock({ $0.popLast() }) {
                        held.withLock { _ = $0.remove(other) }
                        DecoderLifeCell(words: other).give()
                    }
                }
                done.leave()
            }.start()
        }
        #expect(done.wait(timeout: .now() + 60) == .success)
        for cell in handOff.withLock({ $0 }) {
            held.withLock { _ = $0.remove(cell) }
            DecoderLifeCell(words: cell).give()
        }
        #expect(doubles.withLock { $0 } == 0, "a cell was handed out to two takers at once")
        #expect(held.withLock { $0.isEmpty })
    }

    @Test func aContainerOfAGoneDecoderRefusesWhileItsCellServesAnotherDecode() throws {
        try onFreshThread {
            let bytes = try BinaryEncoder().encode(Late(name: "Ada", inner: ["k": "v"]))
            // A decoder that keeps its containers, then goes: its cell goes back to this thread.
            do {
                let once = BinaryDecoder()
                _ = try once.decode(Late.self, from: bytes)
            }
            let (keyed, nested, goneCell) = Late.kept.get()
            #expect(keyed != nil && nested != nil)
            // The next decoder made on this thread takes that cell and, inside its own decode,
            // uses the containers the gone decoder made: they must refuse, not read the new
            // decoder's bytes.
            let other = try BinaryEncoder().encode(Late(name: "Bo", inner: ["k": "w"]))
            let probe = try BinaryDecoder().decode(UsesKept.self, from: other)
            #expect(probe.cell != nil && probe.cell == goneCell, "the new decoder took the gone one's cell")
            #expect(probe.keyedRefused)
            #expect(probe.nestedRefused)
        }
    }

    @Test func aSuperDecodersContainerReadsAfterTheDecoderValueIsDropped() throws {
        let bytes = try BinaryEncoder().encode(Late(name: "Ada", inner: ["k": "v"]))
        let value = try BinaryDecoder().decode(ReadsThroughDroppedSuper.self, from: bytes)
        #expect(value.inner == "v")
        #expect(value.name == "Ada")
        #expect(value.superDecoderWasAlive)
    }

    @Test func aKeptSuperDecoderReadsNothingAfterItsDecode() throws {
        let bytes = try BinaryEncoder().encode(Late(name: "Ada", inner: ["k": "v"]))
        let decoder = BinaryDecoder()
        let value = try decoder.decode(KeepsSuperDecoder.self, from: bytes)
        #expect(value.inner == "v")
        let kept = try #require(KeepsSuperDecoder.kept.withLock { $0 })
        // Its bytes may be gone: a new container reads none of them.
        #expect(throws: (any Error).self) {
            _ = try kept.container(keyedBy: StringKey.self).decode(String.self, forKey: StringKey("k"))
        }
    }
}

/// Runs `body` on a new thread, waits for the thread to exit, and returns what `body` did.
private func onFreshThread<T>(_ body: @escaping @Sendable () throws -> T) throws -> T {
    let outcome = NSLockedBox<Result<T, any Error>?>(nil)
    let thread = Thread { outcome.withLock { $0 = Result { try body() } } }
    thread.start()
    // Until the thread has exited (its cells are shared then): polled, with a deadline.
    let deadline = Date().addingTimeInterval(60)
    while !thread.isFinished && Date() < deadline { Thread.sleep(forTimeInterval: 0.001) }
    guard let result = outcome.withLock({ $0 }) else {
        throw CocoaError(.featureUnsupported, userInfo: [NSDebugDescriptionErrorKey: "the test thread did not finish in 60 s"])
    }
    return try result.get()
}

/// A value whose decoding keeps its keyed container and a nested one (a container of its own).
private struct Late: Codable {
    enum Keys: String, CodingKey { case name, inner }
    /// The containers kept, behind a lock.
    final class Kept: @unchecked Sendable {
        private let lock = NSLock()
        private var keyed: KeyedDecodingContainer<Keys>?
        private var nested: KeyedDecodingContainer<StringKey>?
        private var cell: UnsafeMutablePointer<UInt64>?
        func set(_ keyed: KeyedDecodingContainer<Keys>, _ nested: KeyedDecodingContainer<StringKey>, _ cell: UnsafeMutablePointer<UInt64>?) {
            lock.withLock { (self.keyed, self.nested, self.cell) = (keyed, nested, cell) }
        }
        func get() -> (KeyedDecodingContainer<Keys>?, KeyedDecodingContainer<StringKey>?, UnsafeMutablePointer<UInt64>?) {
            lock.withLock { (keyed, nested, cell) }
        }
    }
    static let kept = Kept()
    var name: String
    var inner: [String: String]

    init(name: String, inner: [String: String]) {
        self.name = name
        self.inner = inner
    }

    init(from decoder: any Decoder) throws {
        let keyed = try decoder.container(keyedBy: Keys.self)
        name = try keyed.decode(String.self, forKey: .name)
        let nested = try keyed.nestedContainer(keyedBy: StringKey.self, forKey: .inner)
        inner = ["k": try nested.decode(String.self, forKey: StringKey("k"))]
        Late.kept.set(keyed, nested, (decoder as? BinaryDecoderImpl)?.cell.words)
    }

    func encode(to encoder: any Encoder) throws {
        var keyed = encoder.container(keyedBy: Keys.self)
        try keyed.encode(name, forKey: .name)
        try keyed.encode(inner, forKey: .inner)
    }
}

/// Decodes the same record shape, and meanwhile uses the containers ``Late`` kept.
private struct UsesKept: Decodable {
    var keyedRefused = false
    var nestedRefused = false
    /// The cell of the decoder decoding this value.
    var cell: UnsafeMutablePointer<UInt64>?

    init(from decoder: any Decoder) throws {
        cell = (decoder as? BinaryDecoderImpl)?.cell.words
        let keyed = try decoder.container(keyedBy: Late.Keys.self)
        _ = try keyed.decode(String.self, forKey: .name)
        let (oldKeyed, oldNested, _) = Late.kept.get()
        keyedRefused = Self.refuses { _ = try oldKeyed?.decode(String.self, forKey: .name) }
        nestedRefused = Self.refuses { _ = try oldNested?.decode(String.self, forKey: StringKey("k")) }
        _ = try keyed.decode([String: String].self, forKey: .inner)
    }

    static func refuses(_ body: () throws -> Void) -> Bool {
        do {
            try body()
            return false
        } catch DecodingError.dataCorrupted(let context) {
            return context.debugDescription.contains("after the decode that made it ended")
        } catch {
            return false
        }
    }
}

/// Reads `inner` through a super decoder's container after the `Decoder` value is dropped.
private struct ReadsThroughDroppedSuper: Decodable {
    var inner: String
    var name: String
    /// Whether the super decoder was still alive (kept by the root decoder) when read.
    var superDecoderWasAlive: Bool

    init(from decoder: any Decoder) throws {
        let keyed = try decoder.container(keyedBy: Late.Keys.self)
        let innerKeyed = try Self.superContainer(keyed)
        // Other decoding in between, so that the super decoder value is long gone.
        name = try keyed.decode(String.self, forKey: .name)
        inner = try innerKeyed.decode(String.self, forKey: StringKey("k"))
        superDecoderWasAlive = (decoder as? BinaryDecoderImpl)?.superDecoders.count == 1
    }

    /// The super decoder lives only in this call; its container is returned.
    private static func superContainer(_ keyed: KeyedDecodingContainer<Late.Keys>) throws -> KeyedDecodingContainer<StringKey> {
        try keyed.superDecoder(forKey: .inner).container(keyedBy: StringKey.self)
    }
}

/// Keeps the `Decoder` of a super decoder past its decode.
private struct KeepsSuperDecoder: Decodable {
    static let kept = NSLockedBox<(any Decoder)?>(nil)
    var inner: String

    init(from decoder: any Decoder) throws {
        let keyed = try decoder.container(keyedBy: Late.Keys.self)
        let superDecoder = try keyed.superDecoder(forKey: .inner)
        inner = try superDecoder.container(keyedBy: StringKey.self).decode(String.self, forKey: StringKey("k"))
        Self.kept.withLock { $0 = superDecoder }
    }
}

/// A value behind a lock.
private final class NSLockedBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        try lock.withLock { try body(&value) }
    }
}
