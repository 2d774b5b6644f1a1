import Foundation
import Testing
import DepotTestSupport
@testable import DepotLMDB

@Suite("Cursors and ranges")
struct CursorTests {
    let folder = TemporaryFolder()
    let env: Environment
    let db: Database<StringCodec, StringCodec>
    let keys = ["a", "b", "ba", "bb", "bc", "c", "d", "e"]

    init() throws {
        env = try Environment.open(path: folder.path)
        db = try env.openDatabase("letters", key: StringCodec.self, value: StringCodec.self)
        try env.write { txn in for k in keys { try txn.put(k.uppercased(), forKey: k, in: db) } }
    }

    func scan(_ range: KeyRange<String>, reverse: Bool = false) throws -> [String] {
        try env.read { try $0.entries(in: db, range: range, reverse: reverse).map(\.key) }
    }

    @Test func fullScanBothWays() throws {
        #expect(try scan(.all) == keys)
        #expect(try scan(.all, reverse: true) == keys.reversed())
    }

    @Test func rawWholeDatabaseWalk() throws {
        func walk(reverse: Bool, stopAfter: Int = .max) throws -> [String] {
            try env.read { txn in
                var seen: [String] = []
                try txn.forEachRaw(in: db, reverse: reverse) { key, value in
                    seen.append(String(decoding: key, as: UTF8.self))
                    #expect(String(decoding: value, as: UTF8.self) == seen.last?.uppercased())
                    return seen.count < stopAfter
                }
                return seen
            }
        }
        #expect(try walk(reverse: false) == keys)
        #expect(try walk(reverse: true) == keys.reversed())
        #expect(try walk(reverse: false, stopAfter: 3) == Array(keys.prefix(3)))
        let empty = try env.openDatabase("empty", key: StringCodec.self, value: StringCodec.self)
        let visited = try env.read { txn in
            var n = 0
            try txn.forEachRaw(in: empty) { _, _ in n += 1; return true }
            try txn.forEachRaw(in: empty, reverse: true) { _, _ in n += 1; return true }
            return n
        }
        #expect(visited == 0)
    }

    @Test func halfOpenAndClosedRanges() throws {
        #expect(try scan(KeyRange("b"..<"c")) == ["b", "ba", "bb", "bc"])
        #expect(try scan(KeyRange("b"..."c")) == ["b", "ba", "bb", "bc", "c"])
        #expect(try scan(KeyRange("b"..<"c"), reverse: true) == ["bc", "bb", "ba", "b"])
        #expect(try scan(KeyRange("b"..."c"), reverse: true) == ["c", "bc", "bb", "ba", "b"])
        #expect(try scan(KeyRange("bb"...)) == ["bb", "bc", "c", "d", "e"])
        #expect(try scan(KeyRange(..<"b")) == ["a"])
        #expect(try scan(KeyRange(..."b"), reverse: true) == ["b", "a"])
        #expect(try scan(.after("c")) == ["d", "e"])
        #expect(try scan(.after("c"), reverse: true) == ["e", "d"])
        #expect(try scan(KeyRange("bz"..<"bzz")) == [])
        #expect(try scan(KeyRange("0"..<"a")) == [])
        #expect(try scan(KeyRange("x"...), reverse: true) == [])
        #expect(try scan(KeyRange("ab"..."bab"), reverse: true) == ["ba", "b"])
    }

    @Test func prefixes() throws {
        #expect(try scan(.prefix("b")) == ["b", "ba", "bb", "bc"])
        #expect(try scan(.prefix("b"), reverse: true) == ["bc", "bb", "ba", "b"])
        #expect(try scan(.prefix("bb")) == ["bb"])
        #expect(try scan(.prefix("z")) == [])
        #expect(try scan(.prefix("e"), reverse: true) == ["e"])
        #expect(try scan(.prefix("0"), reverse: true) == [])
    }

    @Test func limitAndEarlyStop() throws {
        #expect(try env.read { try $0.entries(in: db, limit: 3).map(\.key) } == ["a", "b", "ba"])
        var seen = 0
        try env.read { txn in try txn.forEach(in: db) { _, _ in seen += 1; return seen < 2 } }
        #expect(seen == 2)
    }

    @Test func cursorNavigation() throws {
        try env.read { txn throws in
            try txn.withCursor(db) { c throws in
                #expect(try c.first()?.key == "a")
                #expect(try c.next()?.key == "b")
                #expect(try c.previous()?.key == "a")
                #expect(try c.previous() == nil)
                #expect(try c.last()?.key == "e")
                #expect(try c.next() == nil)
                #expect(try c.seek(exactly: "bb")?.value == "BB")
                #expect(try c.seek(exactly: "bd") == nil)
                #expect(try c.seek(atLeast: "bd")?.key == "c")
                #expect(try c.current()?.key == "c")
                // Not a dupSort database: a key has no other value (LMDB moved to the next key,
                // so a loop over a key's duplicates walked the whole database).
                #expect(try c.nextDuplicate() == nil && c.previousDuplicate() == nil)
                #expect(try c.current()?.key == "c", "the cursor stayed")
            }
        }
    }

    @Test func cursorCannotBeUsedAfterItsClosure() throws {
        var escaped: Cursor<StringCodec, StringCodec>?
        try env.read { txn in try txn.withCursor(db) { escaped = $0 } }
        #expect(throws: LMDBError.badTransaction) { _ = try escaped!.first() }
    }

    /// A cursor not moved yet: `current()` and `duplicateCount()` failed with a bare EINVAL,
    /// `delete()` too.
    @Test func aCursorNotMovedYetIsOnNoEntry() throws {
        try env.write { txn throws in
            try txn.withCursor(db) { c throws in
                #expect(try c.current() == nil)
                #expect(try c.withCurrentRaw { _, _ in 1 } == nil)
                let delete = #expect(throws: LMDBError.self) { try c.delete() }
                #expect(delete?.code == LMDBError.invalidArgument.code)
                #expect(delete?.description.contains("not on an entry") == true, "\(String(describing: delete))")
                #expect(try c.duplicateCount() == 0)
                #expect(try c.first()?.key == "a")
                #expect(try c.current()?.key == "a")
            }
        }
        #expect(try scan(.all).count == keys.count)
    }

    @Test func deleteAtCursorAndPutThroughCursor() throws {
        try env.write { txn throws in
            try txn.withCursor(db) { c throws in
                _ = try c.seek(exactly: "ba")
                try c.delete()
                try c.put("Z", forKey: "z")
                #expect(try c.current()?.key == "z")
            }
        }
        #expect(try scan(.prefix("b")) == ["b", "bb", "bc"])
        #expect(try scan(.from("y")) == ["z"])
    }

    @Test func dupSortNavigation() throws {
        let tags = try env.openDatabase("tags", key: StringCodec.self, value: StringCodec.self, flags: .dupSort)
        try env.write { txn throws in
            for (k, v) in [("fruit", "pear"), ("fruit", "apple"), ("fruit", "fig"), ("nut", "pecan"), ("veg", "leek")] {
                try txn.put(v, forKey: k, in: tags)
            }
            #expect(throws: LMDBError.keyExists) { try txn.put("fig", forKey: "fruit", in: tags, flags: .noDupData) }
        }
        try env.read { txn throws in
            #expect(try txn.entries(in: tags).map(\.value) == ["apple", "fig", "pear", "pecan", "leek"])
            #expect(try txn.entries(in: tags, range: .closed("fruit", "fruit"), reverse: true).map(\.value) == ["pear", "fig", "apple"])
            #expect(try txn.entries(in: tags, range: .prefix("fruit"), reverse: true).map(\.value) == ["pear", "fig", "apple"])
            try txn.withCursor(tags) { c throws in
                #expect(try c.duplicateCount() == 0)
                _ = try c.seek(exactly: "fruit")
                #expect(try c.duplicateCount() == 3)
                #expect(try c.nextDuplicate()?.value == "fig")
                #expect(try c.lastDuplicate()?.value == "pear")
                #expect(try c.nextDuplicate() == nil)
                #expect(try c.firstDuplicate()?.value == "apple")
                #expect(try c.nextKey()?.key == "nut")
                #expect(try c.previousKey()?.value == "pear")
                #expect(try c.seek(key: "fruit", value: "fig"))
                #expect(try c.seek(key: "fruit", value: "kiwi") == false)
            }
        }
        try env.write { txn throws in
            #expect(try txn.delete("fruit", value: "fig", in: tags))
            try txn.withCursor(tags) { c throws in
                _ = try c.seek(exactly: "fruit")
                try c.delete(allDuplicates: true)
            }
        }
        #expect(try env.read { try $0.entries(in: tags).map(\.key) } == ["nut", "veg"])
    }

    @Test func reverseKeyDatabaseRangesUseItsComparator() throws {
        let rev = try env.openDatabase("rev", key: StringCodec.self, value: StringCodec.self, flags: .reverseKey)
        try env.write { txn in for k in ["ab", "ba", "ca", "zz"] { try txn.put(k, forKey: k, in: rev) } }
        // Reverse-key order compares from the last byte: "ba", "ca" (end in a) before "ab" (b) before "zz".
        #expect(try env.read { try $0.entries(in: rev).map(\.key) } == ["ba", "ca", "ab", "zz"])
        #expect(try env.read { try $0.entries(in: rev, range: .halfOpen("ca", "zz")).map(\.key) } == ["ca", "ab"])
        // Keys sharing a first byte are not neighbours here: a prefix scan found "a" only of
        // a, ab, ac, abc. It is refused, naming why.
        try env.write { txn in for k in ["a", "ac", "abc", "bb", "b", "zzb"] { try txn.put(k, forKey: k, in: rev) } }
        for reverse in [false, true] {
            let refused = #expect(throws: LMDBError.self) { _ = try env.read { try $0.entries(in: rev, range: .prefix("a"), reverse: reverse) } }
            #expect(refused?.code == LMDBError.invalidArgument.code && "\(refused.map { "\($0)" } ?? "")".contains("prefix range"))
        }
        let native = try env.openDatabase("native-prefix", key: NativeEndian<UInt32>.self, value: StringCodec.self, flags: .integerKey)
        #expect(throws: LMDBError.self) { _ = try env.read { try $0.entries(in: native, range: .prefix(1)) } }
    }
}
