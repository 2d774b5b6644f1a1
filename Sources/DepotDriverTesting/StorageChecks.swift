import DepotCore
import Foundation

/// Byte-array helpers over the buffer-based ``StorageTransaction`` API.
extension StorageTransaction {
    func bytesPut(_ value: [UInt8], _ key: [UInt8], _ space: Keyspace) throws {
        try value.withUnsafeBytes { v in try key.withUnsafeBytes { k in try put(v, forKey: k, in: space) } }
    }
    func bytesGet(_ key: [UInt8], _ space: Keyspace) throws -> [UInt8]? {
        try key.withUnsafeBytes { k in try withValue(forKey: k, in: space) { [UInt8]($0) } }
    }
    func bytesDelete(_ key: [UInt8], _ space: Keyspace) throws -> Bool {
        try key.withUnsafeBytes { try delete(forKey: $0, in: space) }
    }
    func bytesDelete(_ key: [UInt8], value: [UInt8], _ space: Keyspace) throws -> Bool {
        try key.withUnsafeBytes { k in try value.withUnsafeBytes { v in try delete(forKey: k, value: v, in: space) } }
    }
    /// Entries as (key, value) strings, in scan order.
    func entries(_ space: Keyspace, lower: [UInt8]? = nil, upper: [UInt8]? = nil, prefix: [UInt8]? = nil,
                 reverse: Bool = false, limit: Int = .max) throws -> [String] {
        var out: [String] = []
        try scan(space, lower: lower, upper: upper, prefix: prefix, reverse: reverse) { k, v in
            out.append(String(decoding: k, as: UTF8.self) + "=" + String(decoding: v, as: UTF8.self))
            return out.count < limit
        }
        return out
    }
    func requireKeyspace(_ name: String, multiValue: Bool = false) throws -> Keyspace {
        guard let space = try keyspace(named: name, create: true, multiValue: multiValue) else {
            throw DriverConformanceFailure(check: "", location: "", detail: "keyspace(named: \"\(name)\", create: true) returned nil")
        }
        return space
    }
}

private func b(_ text: String) -> [UInt8] { Array(text.utf8) }

extension DriverConformance {
    static var storageChecks: [Check] {
        [
            Check(name: "keyspaces are created on demand and persist across transactions", needs: []) { driver, e in
                let missing = try driver.read { try $0.keyspace(named: "conformance.absent", create: false, multiValue: false) }
                try e.expect(missing == nil, "a keyspace never created must be absent (nil), got \(String(describing: missing))")
                try driver.write { tx in
                    try e.expect(!tx.isReadOnly, "a write transaction must not be read-only")
                    try e.expect(tx.nestingDepth == 0, "a top-level write must have nestingDepth 0, got \(tx.nestingDepth)")
                    try tx.bytesPut(b("v"), b("k"), try tx.requireKeyspace("conformance.one"))
                }
                let found = try driver.read { tx -> Bool in
                    try e.expect(tx.isReadOnly, "a read transaction must be read-only")
                    return try tx.keyspace(named: "conformance.one", create: false, multiValue: false) != nil
                }
                try e.expect(found, "a keyspace created by a committed write must exist afterwards")
            },
            Check(name: "put, get, overwrite, delete and count", needs: []) { driver, e in
                try driver.write { tx in
                    let s = try tx.requireKeyspace("conformance.kv")
                    try tx.bytesPut(b("1"), b("a"), s)
                    try tx.bytesPut(b("2"), b("b"), s)
                    try tx.bytesPut(b("3"), b("a"), s)
                    try tx.bytesPut([], b("empty"), s)
                    try e.expect(try tx.bytesGet(b("a"), s) == b("3"), "a put over an existing key must replace its value")
                    try e.expect(try tx.bytesGet(b("zz"), s) == nil, "a missing key must read nil")
                    try e.expect(try tx.bytesGet(b("empty"), s) == [], "an empty value must read back empty, not nil")
                    try e.expect(try tx.bytesDelete(b("b"), s), "deleting a present key must return true")
                    try e.expect(try !tx.bytesDelete(b("b"), s), "deleting a missing key must return false")
                    try e.expect(try tx.count(s) == 2, "count must be 2 after the delete, got \(try tx.count(s))")
                }
                try driver.read { tx in
                    guard let s = try tx.keyspace(named: "conformance.kv", create: false, multiValue: false) else {
                        return try e.expect(false, "the keyspace must exist after the commit")
                    }
                    try e.expect(try tx.bytesGet(b("a"), s) == b("3") && tx.bytesGet(b("b"), s) == nil,
                                 "a read after the commit must see the committed values")
                }
            },
            Check(name: "readValue and putIfAbsent report what is stored", needs: []) { driver, e in
                try driver.write { tx in
                    let s = try tx.requireKeyspace("conformance.ifabsent")
                    let first = try b("1").withUnsafeBytes { v in try b("k").withUnsafeBytes { k in
                        try tx.putIfAbsent(v, forKey: k, in: s) { _ in }
                    } }
                    try e.expect(first, "putIfAbsent on a missing key must store it and return true")
                    var seen: [UInt8]?
                    let second = try b("2").withUnsafeBytes { v in try b("k").withUnsafeBytes { k in
                        try tx.putIfAbsent(v, forKey: k, in: s) { seen = [UInt8]($0) }
                    } }
                    try e.expect(!second, "putIfAbsent on a present key must return false")
                    try e.expect(seen == b("1"), "putIfAbsent on a present key must show the stored value, got \(String(describing: seen))")
                    try e.expect(try tx.bytesGet(b("k"), s) == b("1"), "putIfAbsent must not replace a stored value")
                    var read: [UInt8]?
                    let present = try b("k").withUnsafeBytes { k in try tx.readValue(forKey: k, in: s) { read = [UInt8]($0) } }
                    try e.expect(present && read == b("1"), "readValue must return true and show a stored value")
                    let absent = try b("none").withUnsafeBytes { k in try tx.readValue(forKey: k, in: s) { _ in read = nil } }
                    try e.expect(!absent && read == b("1"), "readValue must return false for a missing key without calling its closure")
                }
            },
            Check(name: "putExpectingAbsent stores a new key and never commits on a wrong answer", needs: []) { driver, e in
                func insert(_ tx: any StorageTransaction, _ s: Keyspace, _ key: String, _ value: String,
                            _ seen: inout [UInt8]?) throws -> Bool {
                    var shown: [UInt8]?
                    let answer = try b(value).withUnsafeBytes { v in try b(key).withUnsafeBytes { k in
                        try tx.putExpectingAbsent(v, forKey: k, in: s) { shown = [UInt8]($0) }
                    } }
                    seen = shown
                    return answer
                }
                var seen: [UInt8]?
                let new = try driver.write { tx in try insert(tx, try tx.requireKeyspace("conformance.expecting"), "k", "1", &seen) }
                try e.expect(new && seen == nil, "putExpectingAbsent on a missing key must store it and return true")
                // The closure may run more than once (a driver may answer true on trust first):
                // the run that committed must have seen the stored value.
                let present = try driver.write { tx in try insert(tx, try tx.requireKeyspace("conformance.expecting"), "k", "2", &seen) }
                try e.expect(!present, "putExpectingAbsent on a present key must return false in the run that commits")
                try e.expect(seen == b("1"), "putExpectingAbsent on a present key must show the stored value, got \(String(describing: seen))")
                let stored = try driver.read { tx in
                    try tx.keyspace(named: "conformance.expecting", create: false, multiValue: false).flatMap { try tx.bytesGet(b("k"), $0) }
                }
                try e.expect(stored == b("1"), "putExpectingAbsent must not replace a stored value")
            },
            Check(name: "scans are ordered by bytes, with bounds, prefix, reverse and early stop", needs: []) { driver, e in
                try driver.write { tx in
                    let s = try tx.requireKeyspace("conformance.order")
                    for key in ["b2", "a", "b10", "c", "b1", "\u{7f}", "B"] { try tx.bytesPut(b(key.uppercased()), b(key), s) }
                    try tx.bytesPut([0xff], [0x00, 0x01], s)
                    try tx.bytesPut([0xfe], [0x00], s)
                    let all = try tx.entries(s).map { String($0.split(separator: "=").first ?? "") }
                    let expected = ["\u{0}", "\u{0}\u{1}", "B", "a", "b1", "b10", "b2", "c", "\u{7f}"]
                    try e.expect(all == expected, "a full scan must visit keys in bytewise order: expected \(expected.debugDescription), got \(all.debugDescription)")
                    try e.expect(try tx.entries(s, reverse: true).count == 9 && tx.entries(s, reverse: true).first?.hasPrefix("\u{7f}") == true,
                                 "a reverse scan must start at the greatest key")
                    try e.expect(try tx.entries(s, prefix: b("b1")) == ["b1=B1", "b10=B10"], "a prefix scan must visit exactly the keys with the prefix, in order")
                    try e.expect(try tx.entries(s, prefix: b("b"), reverse: true) == ["b2=B2", "b10=B10", "b1=B1"], "a reverse prefix scan must go from the greatest key down")
                    try e.expect(try tx.entries(s, lower: b("b1"), upper: b("b2")) == ["b1=B1", "b10=B10"], "lower is included and upper excluded")
                    try e.expect(try tx.entries(s, lower: b("b"), upper: b("c"), reverse: true) == ["b2=B2", "b10=B10", "b1=B1"], "a reverse bounded scan")
                    try e.expect(try tx.entries(s, lower: b("a"), limit: 2) == ["a=A", "b1=B1"], "returning false must stop the scan")
                    try e.expect(try tx.entries(s, prefix: b("zz")).isEmpty, "a prefix nothing has must visit nothing")
                }
            },
            Check(name: "multi-value keyspaces keep sorted unique values per key", needs: []) { driver, e in
                try driver.write { tx in
                    let s = try tx.requireKeyspace("conformance.multi", multiValue: true)
                    for value in ["3", "1", "2", "1"] { try tx.bytesPut(b(value), b("k"), s) }
                    try tx.bytesPut(b("9"), b("j"), s)
                    try e.expect(try tx.entries(s) == ["j=9", "k=1", "k=2", "k=3"], "values must be sorted and unique per key, got \(try tx.entries(s))")
                    try e.expect(try tx.entries(s, reverse: true) == ["k=3", "k=2", "k=1", "j=9"], "a reverse scan must reverse values too")
                    try e.expect(try tx.count(s) == 4, "count must count values, got \(try tx.count(s))")
                    try e.expect(try tx.bytesGet(b("k"), s) == b("1"), "get must return the first value")
                    try e.expect(try tx.bytesDelete(b("k"), value: b("2"), s), "deleting a present value must return true")
                    try e.expect(try !tx.bytesDelete(b("k"), value: b("2"), s), "deleting a missing value must return false")
                    try e.expect(try tx.entries(s) == ["j=9", "k=1", "k=3"], "only that value must go")
                    try e.expect(try tx.bytesDelete(b("k"), s) && tx.entries(s) == ["j=9"], "deleting a key must remove all its values")
                }
            },
            Check(name: "clear empties a keyspace and drop removes it", needs: []) { driver, e in
                try driver.write { tx in
                    let s = try tx.requireKeyspace("conformance.clear")
                    try tx.bytesPut(b("v"), b("k"), s)
                    try tx.clear(s)
                    try e.expect(try tx.count(s) == 0 && tx.bytesGet(b("k"), s) == nil, "clear must remove every entry")
                    try tx.bytesPut(b("v"), b("k"), s)
                    let d = try tx.requireKeyspace("conformance.drop")
                    try tx.bytesPut(b("v"), b("k"), d)
                    try tx.drop(d)
                }
                try driver.read { tx in
                    try e.expect(try tx.keyspace(named: "conformance.drop", create: false, multiValue: false) == nil, "a dropped keyspace must be absent")
                    guard let s = try tx.keyspace(named: "conformance.clear", create: false, multiValue: false) else {
                        return try e.expect(false, "a cleared keyspace must still exist")
                    }
                    try e.expect(try tx.count(s) == 1, "a keyspace written after clear must keep the new entry")
                }
            },
            Check(name: "after-commit handlers run once after a commit", needs: []) { driver, e in
                final class Counter: @unchecked Sendable { var value = 0 }
                let ran = Counter()
                try driver.write { tx in
                    _ = try tx.requireKeyspace("conformance.hook")
                    tx.afterCommit { ran.value += 1 }
                    try e.expect(ran.value == 0, "an after-commit handler must not run before the commit")
                }
                try e.expect(ran.value == 1, "an after-commit handler must run exactly once after the commit, ran \(ran.value) times")
            },
            Check(name: "a transaction is let go when its call returns, though its handlers and attachment point back at it",
                  needs: []) { driver, e in
                // The document layer hangs its state on a transaction (`attachment`) and its
                // after-commit handlers capture that state, which points back at the
                // transaction: a driver that keeps either once the call returned leaks every
                // transaction (a driver's `write` may run its closure more than once, so the
                // layer above cannot break the cycle for it).
                final class PointsBack { var txn: (any StorageTransaction)? }
                struct Abort: Error {}
                weak var committedHandler: PointsBack?, committedAttachment: PointsBack?
                weak var abortedHandler: PointsBack?, abortedAttachment: PointsBack?, readAttachment: PointsBack?
                func hang(on tx: any StorageTransaction, handler: inout PointsBack?, attachment: inout PointsBack?) {
                    let viaHandler = PointsBack(), viaAttachment = PointsBack()
                    viaHandler.txn = tx
                    viaAttachment.txn = tx
                    tx.afterCommit { _ = viaHandler }
                    tx.attachment = viaAttachment
                    handler = viaHandler
                    attachment = viaAttachment
                }
                try driver.write { tx in
                    try tx.bytesPut(b("v"), b("k"), try tx.requireKeyspace("conformance.release"))
                    hang(on: tx, handler: &committedHandler, attachment: &committedAttachment)
                }
                do {
                    try driver.write { tx in
                        try tx.bytesPut(b("w"), b("k"), try tx.requireKeyspace("conformance.release"))
                        hang(on: tx, handler: &abortedHandler, attachment: &abortedAttachment)
                        throw Abort()
                    }
                } catch is Abort {}
                try driver.read { tx in
                    _ = try tx.keyspace(named: "conformance.release", create: false, multiValue: false)
                    let viaAttachment = PointsBack()
                    viaAttachment.txn = tx
                    tx.attachment = viaAttachment
                    readAttachment = viaAttachment
                }
                try e.expect(committedHandler == nil, "a committed write's after-commit handlers must be let go after they ran")
                try e.expect(committedAttachment == nil, "a committed write's attachment must be let go when the write returns")
                try e.expect(abortedHandler == nil, "the after-commit handlers of a write that threw must be let go")
                try e.expect(abortedAttachment == nil, "the attachment of a write that threw must be let go")
                try e.expect(readAttachment == nil, "a read's attachment must be let go when the read returns")
            },
            Check(name: "a throwing write rolls back entirely", needs: .transactions) { driver, e in
                struct Abort: Error {}
                final class Flag: @unchecked Sendable { var ran = false }
                let hook = Flag()
                do {
                    try driver.write { tx in
                        try tx.bytesPut(b("v"), b("k"), try tx.requireKeyspace("conformance.rollback"))
                        tx.afterCommit { hook.ran = true }
                        throw Abort()
                    }
                } catch is Abort {}
                let space = try driver.read { try $0.keyspace(named: "conformance.rollback", create: false, multiValue: false) }
                if let space { try e.expect(try driver.read { try $0.count(space) } == 0, "a write whose closure threw must leave nothing") }
                try e.expect(!hook.ran, "after-commit handlers must not run when the write throws")
            },
            Check(name: "a dropped keyspace is gone at once in its write, and an aborted drop leaves it whole", needs: .transactions) { driver, e in
                struct Abort: Error {}
                try driver.write { tx in
                    let s = try tx.requireKeyspace("conformance.dropabort")
                    try tx.bytesPut(b("kept"), b("k"), s)
                }
                do {
                    try driver.write { tx in
                        let s = try tx.requireKeyspace("conformance.dropabort")
                        try tx.drop(s)
                        try e.expect(try tx.keyspace(named: "conformance.dropabort", create: false, multiValue: false) == nil,
                                     "a keyspace dropped in this write must be absent in it")
                        let again = try tx.requireKeyspace("conformance.dropabort")
                        try e.expect(try tx.count(again) == 0, "a keyspace dropped and created again in one write must start empty")
                        try tx.bytesPut(b("new"), b("k"), again)
                        throw Abort()
                    }
                } catch is Abort {}
                // Keyspaces created after the abort must not take the dropped one's place.
                try driver.write { tx in
                    for i in 0..<3 { try tx.bytesPut(b("other"), b("k"), try tx.requireKeyspace("conformance.dropabort.\(i)")) }
                }
                try driver.read { tx in
                    guard let s = try tx.keyspace(named: "conformance.dropabort", create: false, multiValue: false) else {
                        return try e.expect(false, "a drop in a write that threw must leave the keyspace")
                    }
                    try e.expect(try tx.bytesGet(b("k"), s) == b("kept"), "a drop in a write that threw must leave the entries, got \(String(describing: try tx.bytesGet(b("k"), s)))")
                }
            },
            Check(name: "savepoints roll back alone", needs: .savepoints) { driver, e in
                struct Abort: Error {}
                try driver.write { tx in
                    let s = try tx.requireKeyspace("conformance.savepoint")
                    try tx.bytesPut(b("1"), b("before"), s)
                    _ = try? tx.savepoint {
                        try e.expect(tx.nestingDepth == 1, "nestingDepth must be 1 inside a savepoint, got \(tx.nestingDepth)")
                        try tx.bytesPut(b("2"), b("inside"), s)
                        throw Abort()
                    }
                    try tx.savepoint { try tx.bytesPut(b("3"), b("kept"), s) }
                    try e.expect(try tx.entries(s) == ["before=1", "kept=3"], "a throwing savepoint must undo only its own writes, got \(try tx.entries(s))")
                }
            },
            Check(name: "a read snapshot ignores a commit made meanwhile", needs: .snapshots) { driver, e in
                try driver.write { tx in try tx.bytesPut(b("1"), b("k"), try tx.requireKeyspace("conformance.snapshot")) }
                try driver.read { tx in
                    guard let s = try tx.keyspace(named: "conformance.snapshot", create: false, multiValue: false) else {
                        return try e.expect(false, "the keyspace must exist")
                    }
                    let done = DispatchSemaphore(value: 0)
                    Thread {
                        _ = try? driver.write { tx in try tx.bytesPut(b("2"), b("k"), try tx.requireKeyspace("conformance.snapshot")) }
                        done.signal()
                    }.start()
                    try e.expect(done.wait(timeout: .now() + 30) == .success, "a write on another thread must not wait for an open snapshot read")
                    try e.expect(try tx.bytesGet(b("k"), s) == b("1"), "a snapshot must not see a commit made after it began")
                }
                let now = try driver.read { tx in try tx.keyspace(named: "conformance.snapshot", create: false, multiValue: false).flatMap { try tx.bytesGet(b("k"), $0) } }
                try e.expect(now == b("2"), "a new read must see the commit")
            },
            Check(name: "a read from its first operation sees what was committed before it, in one snapshot", needs: .snapshots) { driver, e in
                func current() throws -> [UInt8]? {
                    try driver.readFromFirstOperation { tx in
                        try tx.keyspace(named: "conformance.first", create: false, multiValue: false).flatMap { try tx.bytesGet(b("k"), $0) }
                    }
                }
                for value in ["1", "2", "3"] {
                    try driver.write { tx in try tx.bytesPut(b(value), b("k"), try tx.requireKeyspace("conformance.first")) }
                    let seen = try current()
                    try e.expect(seen == b(value), "readFromFirstOperation must see a commit made before it began")
                }
                // Two reads in it agree, with a commit between them (its body may run again).
                try driver.readFromFirstOperation { tx in
                    guard let s = try tx.keyspace(named: "conformance.first", create: false, multiValue: false) else {
                        return try e.expect(false, "the keyspace must exist")
                    }
                    let first = try tx.bytesGet(b("k"), s)
                    let done = DispatchSemaphore(value: 0)
                    Thread {
                        _ = try? driver.write { tx in try tx.bytesPut(b("4"), b("k"), try tx.requireKeyspace("conformance.first")) }
                        done.signal()
                    }.start()
                    try e.expect(done.wait(timeout: .now() + 30) == .success, "a write on another thread must not wait for a read")
                    try e.expect(try tx.bytesGet(b("k"), s) == first, "two reads in one readFromFirstOperation must see one snapshot")
                }
            },
        ]
    }
}
