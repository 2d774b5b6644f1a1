import CLMDBBench
import DepotLMDB
import Foundation

/// One engine's implementation of the key/value workloads. Every function opens its own store in
/// `folder`, runs, closes it, and returns the elapsed nanoseconds of the measured part.
protocol KVEngine {
    var name: String { get }
    /// Put keys 0..<n (big-endian counters) in key order, one transaction. Measured: the put loop.
    func appendPut(folder: String, n: Int, value: [UInt8]) throws -> UInt64
    /// Put `keys` in the given order, one transaction. Measured: the put loop.
    func randomPut(folder: String, keys: [UInt64], value: [UInt8]) throws -> UInt64
    /// Get every key of `keys` (all present) in one read transaction; sum the first value byte.
    func randomGet(folder: String, keys: [UInt64], checksum: inout UInt64) throws -> UInt64
    /// Visit every record in key order; count them and sum the last value byte.
    func scan(folder: String, count: inout UInt64, checksum: inout UInt64) throws -> UInt64
    /// `n` durable transactions of one put each (keys start..<start+n). Measured: all of them.
    func durableSingleWrites(folder: String, n: Int, value: [UInt8]) throws -> UInt64
}

/// The baseline: the same workloads written in C straight on liblmdb (target CLMDBBench).
struct CEngine: KVEngine {
    let name = "c"
    func appendPut(folder: String, n: Int, value: [UInt8]) throws -> UInt64 {
        try checked(clmdb_append_put(folder, n, value.count, nil), "append put")
    }
    func randomPut(folder: String, keys: [UInt64], value: [UInt8]) throws -> UInt64 {
        try checked(keys.withUnsafeBufferPointer { clmdb_random_put(folder, $0.baseAddress, $0.count, value.count, nil) }, "random put")
    }
    func randomGet(folder: String, keys: [UInt64], checksum: inout UInt64) throws -> UInt64 {
        try checked(keys.withUnsafeBufferPointer { clmdb_random_get(folder, $0.baseAddress, $0.count, &checksum) }, "random get")
    }
    func scan(folder: String, count: inout UInt64, checksum: inout UInt64) throws -> UInt64 {
        try checked(clmdb_scan(folder, &count, &checksum), "scan")
    }
    func durableSingleWrites(folder: String, n: Int, value: [UInt8]) throws -> UInt64 {
        try checked(clmdb_durable_single_writes(folder, 0, n, value.count, nil), "durable single writes")
    }
}

/// The Swift binding (DepotLMDB): `BigEndian<UInt64>` keys, `BytesCodec` values, zero-copy reads.
struct LMDBEngine: KVEngine {
    let name = "lmdb"
    typealias KV = Database<BigEndian<UInt64>, BytesCodec>

    static func open(_ folder: String, maxWait: Duration = .zero, noSync: Bool = false) throws -> (Environment, KV) {
        var options = EnvironmentOptions()
        if noSync { options.unsafeDurability.insert(.noSync) }
        options.mapSize = 2 << 30   // as the C side: no growth during the run
        options.groupCommit.maxWait = maxWait
        let env = try Environment.open(path: folder, options: options)
        let db = try env.openDatabase(nil, key: BigEndian<UInt64>.self, value: BytesCodec.self)
        return (env, db)
    }

    /// An untimed pass over every record, so that page faults of the fresh map are not measured
    /// (as the C side does).
    static func touchAll(_ txn: Transaction, _ db: KV) throws {
        var sink: UInt64 = 0
        try txn.forEachRaw(in: db) { _, value in sink &+= UInt64(value[0]); return true }
        blackHole(sink)
    }

    func appendPut(folder: String, n: Int, value: [UInt8]) throws -> UInt64 {
        let (env, db) = try Self.open(folder)
        defer { try? env.close() }
        return try env.write { txn in
            let t0 = now()
            for i in 0..<UInt64(n) {
                try txn.put(value, forKey: i, in: db, flags: .append)
            }
            return now() - t0
        }
    }

    func randomPut(folder: String, keys: [UInt64], value: [UInt8]) throws -> UInt64 {
        let (env, db) = try Self.open(folder)
        defer { try? env.close() }
        return try env.write { txn in
            let t0 = now()
            for key in keys {
                try txn.put(value, forKey: key, in: db)
            }
            return now() - t0
        }
    }

    func randomGet(folder: String, keys: [UInt64], checksum: inout UInt64) throws -> UInt64 {
        let (env, db) = try Self.open(folder)
        defer { try? env.close() }
        let (elapsed, sum) = try env.read { txn in
            try Self.touchAll(txn, db)
            var sum: UInt64 = 0
            let t0 = now()
            for key in keys {
                guard let first = try txn.withValue(forKey: key, in: db, { UInt64($0[0]) }) else {
                    throw BenchError("lmdb: key \(key) is missing")
                }
                sum &+= first
            }
            return (now() - t0, sum)
        }
        checksum &+= sum
        return elapsed
    }

    func scan(folder: String, count: inout UInt64, checksum: inout UInt64) throws -> UInt64 {
        let (env, db) = try Self.open(folder)
        defer { try? env.close() }
        let (elapsed, records, sum) = try env.read { txn in
            try Self.touchAll(txn, db)
            var records: UInt64 = 0
            var sum: UInt64 = 0
            let t0 = now()
            try txn.forEachRaw(in: db) { _, value in
                records &+= 1
                sum &+= UInt64(value[value.count - 1])
                return true
            }
            return (now() - t0, records, sum)
        }
        count = records
        checksum &+= sum
        return elapsed
    }

    func durableSingleWrites(folder: String, n: Int, value: [UInt8]) throws -> UInt64 {
        let (env, db) = try Self.open(folder)
        defer { try? env.close() }
        let t0 = now()
        for i in 0..<UInt64(n) {
            try env.write { txn in try txn.put(value, forKey: i, in: db) }
        }
        return now() - t0
    }

    // MARK: The raw floor of the document workloads (pre-encoded JSON bytes, string keys)

    func putBlobs(folder: String, _ records: PackedRecords) throws -> UInt64 {
        var options = EnvironmentOptions()
        options.mapSize = 2 << 30
        let env = try Environment.open(path: folder, options: options)
        defer { try? env.close() }
        let db = try env.openDatabase(nil, key: RawBytesCodec.self, value: RawBytesCodec.self)
        let t0 = now()
        try records.keyBlob.withUnsafeBytes { keys in
            try records.valueBlob.withUnsafeBytes { values in
                try env.write { txn in
                    for i in 0..<records.count {
                        let k = UnsafeRawBufferPointer(rebasing: keys[records.keyOffsets[i]..<records.keyOffsets[i + 1]])
                        let v = UnsafeRawBufferPointer(rebasing: values[records.valueOffsets[i]..<records.valueOffsets[i + 1]])
                        try txn.put(v, forKey: k, in: db)
                    }
                }
            }
        }
        return now() - t0
    }

    func getBlobs(folder: String, _ ids: PackedRecords, checksum: inout UInt64) throws -> UInt64 {
        var options = EnvironmentOptions()
        options.mapSize = 2 << 30
        let env = try Environment.open(path: folder, options: options)
        defer { try? env.close() }
        let db = try env.openDatabase(nil, key: RawBytesCodec.self, value: RawBytesCodec.self)
        let t0 = now()
        let sum = try ids.keyBlob.withUnsafeBytes { keys in
            try env.read { txn in
                var sum: UInt64 = 0
                for i in 0..<ids.count {
                    let k = UnsafeRawBufferPointer(rebasing: keys[ids.keyOffsets[i]..<ids.keyOffsets[i + 1]])
                    guard let length = try txn.withValue(forKey: k, in: db, { $0.count }) else {
                        throw BenchError("lmdb: document key \(i) is missing")
                    }
                    sum &+= UInt64(length)
                }
                return sum
            }
        }
        let elapsed = now() - t0
        checksum &+= sum
        return elapsed
    }
}

/// A codec over borrowed raw bytes, for the floor of the document workloads: it puts bytes
/// without copying them into an array. Reads go through `withValue` only; `decode` refuses, since
/// a pointer into the map must not outlive its transaction.
enum RawBytesCodec: LMDBCodec {
    static func withBytes<R>(of value: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(value)
    }
    static func decode(_ bytes: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer {
        throw CodecError("RawBytesCodec values cannot be decoded; use withValue")
    }
}
