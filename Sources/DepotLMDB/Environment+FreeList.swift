import CLMDB

/// One record of LMDB's free list: pages that the commit `transactionID` stopped using.
public struct FreeListEntry: Sendable, Hashable, Codable {
    /// The transaction that freed the pages.
    public var transactionID: Int
    /// How many pages it freed.
    public var pages: Int
}

extension Environment {
    /// LMDB's free list (its internal database 0), as of the latest commit.
    ///
    /// A page freed by commit *F* can be reused only once no reader's snapshot is older than *F*:
    /// this is how a long-lived reader makes the file grow.
    public func freeList() throws -> [FreeListEntry] {
        try read { txn in
            let handle = try txn.liveHandle("read free list")
            var cursor: OpaquePointer?
            try check(mdb_cursor_open(handle, 0, &cursor), "read free list")
            defer { mdb_cursor_close(cursor) }
            var entries: [FreeListEntry] = []
            var key = MDB_val(), value = MDB_val()
            var op = MDB_FIRST
            while true {
                let rc = mdb_cursor_get(cursor, &key, &value, op)
                if rc == MDB_NOTFOUND { break }
                try check(rc, "read free list")
                op = MDB_NEXT
                // Key: the freeing txn ID (size_t); value: an ID list whose first word is its length.
                guard key.mv_size == MemoryLayout<Int>.size, value.mv_size >= MemoryLayout<Int>.size else {
                    throw LMDBError(code: LMDBError.corrupted.code, operation: "read free list", detail: "a free-list record has an unexpected size")
                }
                let id = UnsafeRawPointer(key.mv_data!).loadUnaligned(as: Int.self)
                let count = UnsafeRawPointer(value.mv_data!).loadUnaligned(as: Int.self)
                guard count >= 0 else {
                    throw LMDBError(code: LMDBError.corrupted.code, operation: "read free list", detail: "a free-list record has a negative page count")
                }
                entries.append(FreeListEntry(transactionID: id, pages: count))
            }
            return entries
        }
    }

    /// The reader table (``readerList()``) with ``ReaderSlot/pinnedPages`` filled in for every
    /// slot holding a snapshot: the pages freed since that snapshot, which LMDB cannot reuse
    /// while it lives (LMDB reuses a page freed by commit *F* only when every snapshot is newer
    /// than *F*; pages freed by the last commit are never reused by the next one anyway).
    public func readersWithPinnedPages() throws -> [ReaderSlot] {
        let free = try freeList()
        let last = try info().lastTransactionID
        return try readerList().map { slot in
            var slot = slot
            if let snapshot = slot.transactionID {
                slot.pinnedPages = free.lazy.filter { $0.transactionID >= snapshot && $0.transactionID < last }.reduce(0) { $0 &+ $1.pages < $0 ? .max : $0 &+ $1.pages } // saturating: counts come from the file
            }
            return slot
        }
    }
}
