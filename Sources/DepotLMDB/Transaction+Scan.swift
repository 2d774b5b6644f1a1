import CLMDB

extension Transaction {
    /// Visits the entries of `db` in `range`, in key order (or reverse), with the raw bytes
    /// straight from the map (valid only during each call). Return false from `body` to stop.
    /// In a dupSort database every value of a key is visited. An entry whose key is empty or
    /// longer than ``Environment/maxKeySize`` (a damaged node: LMDB stores neither) throws
    /// `MDB_CORRUPTED` instead of reaching `body`.
    @inlinable
    public func forEachRaw<K, V>(in db: Database<K, V>, range: KeyRange<K.Value> = .all, reverse: Bool = false,
                                 _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        if range.lower == nil && range.upper == nil && range.prefix == nil {
            // The whole database: no bounds to check on each step.
            // A plain mdb_cursor_get loop (no optional tuple per step); `live()` still checks on
            // every step that neither the cursor nor the transaction ended inside `body`.
            try withCursor(db) { cursor in
                var k = MDB_val(), v = MDB_val()
                var rc = mdb_cursor_get(try cursor.live(), &k, &v, reverse ? MDB_LAST : MDB_FIRST)
                let step = reverse ? MDB_PREV : MDB_NEXT
                while rc == 0 {
                    if _slowPath(!Self.isKeySizeStored(k.mv_size, maxKeySize: db.maxKeySize)) {
                        throw Self.damagedEntry(keySize: k.mv_size, maxKeySize: db.maxKeySize, database: db.name)
                    }
                    guard try body(UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size),
                                   UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size)) else { return }
                    rc = mdb_cursor_get(try cursor.live(), &k, &v, step)
                }
                if rc != MDB_NOTFOUND { throw failure(rc, "mdb_cursor_get", db.name) }
            }
            return
        }
        try forEachRawInRange(in: db, range: range, reverse: reverse, body)
    }

    /// ``forEachRaw(in:range:reverse:_:)`` over the whole database, in key order, without its
    /// check of each key's size: for a verifier that checks every entry itself (a key's size and
    /// place in the file) and reports each damaged one by its position.
    package func forEachRawUnchecked<K, V>(in db: Database<K, V>,
                                           _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        try withCursor(db) { cursor in
            var k = MDB_val(), v = MDB_val()
            var rc = mdb_cursor_get(try cursor.live(), &k, &v, MDB_FIRST)
            while rc == 0 {
                guard try body(UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size),
                               UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size)) else { return }
                rc = mdb_cursor_get(try cursor.live(), &k, &v, MDB_NEXT)
            }
            if rc != MDB_NOTFOUND { throw failure(rc, "mdb_cursor_get", db.name) }
        }
    }

    /// ``forEachRaw(in:range:reverse:_:)`` with bounds or a prefix.
    @usableFromInline
    func forEachRawInRange<K, V>(in db: Database<K, V>, range: KeyRange<K.Value>, reverse: Bool,
                                 _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        let lower = range.lower.map { (K.withBytes(of: $0.key) { [UInt8]($0) }, $0.inclusive) }
        let upper = range.upper.map { (K.withBytes(of: $0.key) { [UInt8]($0) }, $0.inclusive) }
        let prefix = range.prefix.map { K.withBytes(of: $0) { [UInt8]($0) } }
        if prefix != nil && !db.flags.isDisjoint(with: [.reverseKey, .integerKey]) {
            // Keys sharing leading bytes are not neighbours in these orders: a prefix scan
            // would stop early and miss some.
            throw LMDBError(code: LMDBError.invalidArgument.code, operation: "scan", database: db.name,
                            detail: "a prefix range needs keys ordered by their bytes; this database is reverseKey or integerKey: use lower and upper bounds, or scan it all")
        }
        let txn = try liveHandle("scan", for: db)
        let dbi = MDB_dbi(db.dbi)
        func compare(_ a: UnsafeRawBufferPointer, _ b: [UInt8]) -> Int32 {
            b.withUnsafeBytes { bb in
                var x = MDB_val(mv_size: a.count, mv_data: UnsafeMutableRawPointer(mutating: a.baseAddress))
                var y = MDB_val(mv_size: bb.count, mv_data: UnsafeMutableRawPointer(mutating: bb.baseAddress))
                return mdb_cmp(txn, dbi, &x, &y)
            }
        }
        func inRange(_ key: UnsafeRawBufferPointer) -> Bool {
            if let prefix, !(key.count >= prefix.count && key.prefix(prefix.count).elementsEqual(prefix)) { return false }
            if let (bound, inclusive) = lower {
                let c = compare(key, bound)
                if c < 0 || (c == 0 && !inclusive) { return false }
            }
            if let (bound, inclusive) = upper {
                let c = compare(key, bound)
                if c > 0 || (c == 0 && !inclusive) { return false }
            }
            return true
        }
        try withCursor(db) { cursor in
            var entry: (key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)?
            if !reverse {
                let start = [lower?.0, prefix].compactMap { $0 }.max { a, b in
                    a.withUnsafeBytes { compare($0, b) < 0 }
                }
                if let start, !start.isEmpty {
                    entry = try start.withUnsafeBytes { try cursor.moveRaw(MDB_SET_RANGE, key: $0) }
                } else {
                    entry = try cursor.moveRaw(MDB_FIRST)
                }
                // Skip an excluded lower bound.
                while let e = entry, let (bound, inclusive) = lower, !inclusive, compare(e.key, bound) == 0 {
                    entry = try cursor.moveRaw(MDB_NEXT)
                }
                while let e = entry, inRange(e.key) {
                    guard try body(e.key, e.value) else { return }
                    entry = try cursor.moveRaw(MDB_NEXT)
                }
            } else {
                // Position on the first key past the range's top, then step back.
                var seek = upper.map { $0.0 }
                if let prefix, let successor = Self.successor(of: prefix),
                   seek == nil || successor.withUnsafeBytes({ compare($0, seek!) < 0 }) {
                    seek = successor
                }
                if let seek, !seek.isEmpty {
                    entry = try seek.withUnsafeBytes { try cursor.moveRaw(MDB_SET_RANGE, key: $0) }
                    if let e = entry {
                        if inRange(e.key) {
                            // Exactly on an included upper bound: start from its last duplicate.
                            if db.flags.contains(.dupSort) { entry = try cursor.moveRaw(MDB_LAST_DUP) }
                        } else {
                            entry = try cursor.moveRaw(MDB_PREV)
                        }
                    } else {
                        entry = try cursor.moveRaw(MDB_LAST)
                    }
                } else {
                    entry = try cursor.moveRaw(MDB_LAST)
                }
                func aboveRange(_ key: UnsafeRawBufferPointer) -> Bool {
                    if let (bound, inclusive) = upper {
                        let c = compare(key, bound)
                        if c > 0 || (c == 0 && !inclusive) { return true }
                    }
                    if let prefix, !(key.count >= prefix.count && key.prefix(prefix.count).elementsEqual(prefix)),
                       compare(key, prefix) > 0 { return true }
                    return false
                }
                while let e = entry, aboveRange(e.key) { entry = try cursor.moveRaw(MDB_PREV) }
                while let e = entry, inRange(e.key) {
                    guard try body(e.key, e.value) else { return }
                    entry = try cursor.moveRaw(MDB_PREV)
                }
            }
        }
    }

    /// Whether a key of `size` bytes is one LMDB can hold (1 to `maxKeySize` bytes): a cursor
    /// that returns another size read a damaged node (LMDB does not check what it reads), and
    /// its bytes may run into a stored value. One comparison: `size - 1` wraps for 0.
    @inlinable @inline(__always)
    static func isKeySizeStored(_ size: Int, maxKeySize: Int) -> Bool {
        UInt(bitPattern: size &- 1) < UInt(bitPattern: maxKeySize)
    }

    /// The error for an entry whose key ``isKeySizeStored(_:maxKeySize:)`` refuses: the page is
    /// damaged. Names the size only, never the bytes (they may be a stored value's).
    @usableFromInline
    static func damagedEntry(keySize: Int, maxKeySize: Int, database: String?) -> LMDBError {
        LMDBError(code: MDB_CORRUPTED, operation: "mdb_cursor_get", database: database,
                  detail: "an entry has a key of \(keySize) bytes, where LMDB keys hold 1 to \(maxKeySize): the page holding it is damaged")
    }

    /// The smallest byte string greater than every string starting with `prefix`, or nil if none.
    static func successor(of prefix: [UInt8]) -> [UInt8]? {
        var bytes = prefix
        while let last = bytes.last {
            if last < 0xFF { bytes[bytes.count - 1] = last + 1; return bytes }
            bytes.removeLast()
        }
        return nil
    }

    /// Visits the entries of `db` in `range`, decoded, in key order (or reverse).
    /// Return false from `body` to stop early.
    public func forEach<K, V>(in db: Database<K, V>, range: KeyRange<K.Value> = .all, reverse: Bool = false,
                              _ body: (K.Value, V.Value) throws -> Bool) throws {
        try forEachRaw(in: db, range: range, reverse: reverse) { key, value in
            try body(try K.decode(key), try V.decode(value))
        }
    }

    /// The entries of `db` in `range`, decoded and copied into an array (at most `limit`).
    public func entries<K, V>(in db: Database<K, V>, range: KeyRange<K.Value> = .all, reverse: Bool = false,
                              limit: Int = .max) throws -> [(key: K.Value, value: V.Value)] {
        var result: [(key: K.Value, value: V.Value)] = []
        guard limit > 0 else { return result }
        try forEach(in: db, range: range, reverse: reverse) { key, value in
            result.append((key, value))
            return result.count < limit
        }
        return result
    }
}
