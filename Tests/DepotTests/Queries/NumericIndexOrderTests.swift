import DepotTestSupport
import Foundation
import Testing

@testable import Depot
@testable import DepotCore
@testable import DepotEngine
import DepotLMDB

/// A product priced in a `Double`, with an index on the price.
struct PricedProduct: Document, Equatable {
    var id: Int
    var price: Double
    static var indexes: [DocumentIndex<PricedProduct>] { [.init(\.price)] }
}

/// A reading in a `Float`, with an index.
struct FloatReading: Document, Equatable {
    var id: Int
    var value: Float
    static var indexes: [DocumentIndex<FloatReading>] { [.init(\.value)] }
}

/// A badge with a unique number.
struct NumberedBadge: Document, Equatable {
    var id: Int
    var number: Double
    static var indexes: [DocumentIndex<NumberedBadge>] { [.init(\.number, unique: true)] }
}

/// `NumberedBadge`'s collection, declared without its index.
struct UnindexedBadge: Document, Equatable {
    var id: Int
    var number: Double
    static var collection: String { NumberedBadge.collection }
}

/// Index keys of numbers: integers were keyed under one tag and fractional numbers under
/// another, so a range through an index over a `Double` field returned only one of the two
/// kinds (`price < 2` over 0.5, 1, 1.5, 2, 3 gave [1]). Numbers of every type share one order now.
@Suite("Indexes: numbers in one order")
struct NumericIndexOrderTests {
    /// Integers, unsigned integers and doubles around the places where types and precision change.
    static let numbers: [DocumentValue] = {
        var values: [DocumentValue] = []
        let doubles: [Double] = [-.infinity, -.greatestFiniteMagnitude, -1e300, -0x1p64, -0x1p63, -0x1p53 - 2, -0x1p53,
                                 -5, -1.5, -1, -0.5, -1e-300, -0.0, 0, 1e-300, 0.5, 1, 1.2, 1.5, 2, 3, 0x1p53, 0x1p53 + 2,
                                 9007199254740993.0, 0x1p63, 0x1p63 + 2048, 0x1p64, 1e300, .greatestFiniteMagnitude, .infinity]
        values += doubles.map { .double($0) }
        let ints: [Int64] = [.min, .min + 1, -(1 << 53) - 1, -(1 << 53), -5, -2, -1, 0, 1, 2, 3,
                             (1 << 53) - 1, 1 << 53, (1 << 53) + 1, (1 << 62) + 1, .max - 1024, .max - 1, .max]
        values += ints.map { .int($0) }
        let uints: [UInt64] = [0, 1, 2, 1 << 53 + 1, UInt64(Int64.max), UInt64(Int64.max) + 1, UInt64(Int64.max) + 2,
                               UInt64.max - 2048, UInt64.max - 1, .max]
        values += uints.map { .uint($0) }
        return values
    }()

    static func byteOrder(_ a: [UInt8], _ b: [UInt8]) -> ComparisonResult {
        a.lexicographicallyPrecedes(b) ? .orderedAscending : (b.lexicographicallyPrecedes(a) ? .orderedDescending : .orderedSame)
    }

    /// For every pair, the keys' byte order is the values' exact numeric order (equal numbers of
    /// different types, such as 2, 2.0 and 2 unsigned, have one key).
    @Test func keyOrderIsNumericOrder() throws {
        for a in Self.numbers {
            for b in Self.numbers {
                let exact = try #require(DocumentValue.compare(a, b))
                let keys = Self.byteOrder(IndexKeyEncoding.encode(a), IndexKeyEncoding.encode(b))
                #expect(keys == exact, "\(a) vs \(b)")
            }
        }
    }

    /// The examples that returned wrong documents: ranges through the index agree with a scan.
    @Test func rangesOverDoublesFindEveryMatch() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        let prices: [Double] = [-3, -1.5, -0.0, 0, 0.5, 1, 1.5, 2, 2.25, 3, 1e20, 0x1p53 + 2]
        try store.write { tx in for (i, p) in prices.enumerated() { try tx.park(PricedProduct(id: i, price: p)) } }
        let checks: [(Comparison<Double>, (Double) -> Bool)] = [
            (.lessThan(2), { $0 < 2 }), (.atMost(2), { $0 <= 2 }), (.greaterThan(1.2), { $0 > 1.2 }),
            (.atLeast(1), { $0 >= 1 }), (.lessThan(0), { $0 < 0 }), (.greaterThan(-0.75), { $0 > -0.75 }),
            (.equalTo(0), { $0 == 0 }), (.equalTo(1.5), { $0 == 1.5 }), (.greaterThan(1e19), { $0 > 1e19 }),
        ]
        try store.read { tx in
            for (i, (comparison, predicate)) in checks.enumerated() {
                let result = try tx.execute(FetchRequest<PricedProduct>().matching(\.price, comparison))
                #expect(result.plan.usedIndex, "check \(i): the index was used")
                let expected = prices.filter(predicate).sorted()
                #expect(result.documents.map(\.price).sorted() == expected, "check \(i)")
            }
        }
    }

    @Test func rangesOverFloatsFindEveryMatch() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        let values: [Float] = [-2, -0.5, 0, 0.25, 1, 1.75, 4]
        try store.write { tx in for (i, v) in values.enumerated() { try tx.park(FloatReading(id: i, value: v)) } }
        try store.read { tx in
            let below = try tx.execute(FetchRequest<FloatReading>().matching(\.value, .lessThan(1)))
            #expect(below.plan.usedIndex)
            #expect(below.documents.map(\.value).sorted() == [-2, -0.5, 0, 0.25])
            let above = try tx.execute(FetchRequest<FloatReading>().matching(\.value, .atLeast(0.25)))
            #expect(above.documents.map(\.value).sorted() == [0.25, 1, 1.75, 4])
        }
    }

    /// The schemaless query through the same index: integer and fractional bounds alike.
    @Test func schemalessRangesAgreeWithAScan() throws {
        let folder = TemporaryFolder()
        let store = try Store(path: folder.path)
        let prices: [Double] = [0.5, 1, 1.5, 2, 3]
        try store.write { tx in for (i, p) in prices.enumerated() { try tx.park(PricedProduct(id: i, price: p)) } }
        try store.read { tx in
            for bound in [DocumentValue.int(2), .double(1.2), .uint(1)] {
                let viaIndex = try tx.query(collection: PricedProduct.collection, conditions: [FieldCondition(field: "price", op: .less, value: bound)])
                #expect(viaIndex.plan.usedIndex)
                let expected = prices.filter { DocumentValue.compare(.double($0), bound) == .orderedAscending }
                let found = viaIndex.documents.compactMap { doc -> Double? in
                    if case .double(let d)? = doc.document["price"] { return d }
                    if case .int(let i)? = doc.document["price"] { return Double(i) }
                    return nil
                }
                #expect(found.sorted() == expected, "< \(bound)")
            }
        }
    }

    /// A store whose index was written in the earlier format: queries do not use the index
    /// (they scan, and answer right), and the next write through the type rebuilds it.
    @Test func anIndexOfTheEarlierFormatIsRebuilt() throws {
        let folder = TemporaryFolder()
        let prices: [Double] = [0.5, 1, 1.5, 2, 3]
        do {
            let store = try Store(path: folder.path)
            try store.write { tx in for (i, p) in prices.enumerated() { try tx.park(PricedProduct(id: i, price: p)) } }
            try store.environment.close()
        }
        do {
            let env = try Environment.open(path: folder.path)
            let meta = try env.openDatabase(StoreLayout.metaDatabase, key: BytesCodec.self, value: BytesCodec.self)
            let key = Array(StoreLayout.indexMetaKey(alias: Store.defaultAlias, collection: PricedProduct.collection, index: "price").utf8)
            try env.write { try $0.put(Array("v2\u{0}m\u{0}price".utf8), forKey: key, in: meta) }
            try env.close()
        }
        let store = try Store(path: folder.path)
        let below2 = FetchRequest<PricedProduct>().matching(\.price, .lessThan(2))
        try store.read { tx in
            let result = try tx.execute(below2)
            #expect(!result.plan.usedIndex, "an index of the earlier format is not trusted")
            #expect(result.documents.map(\.price).sorted() == [0.5, 1, 1.5])
        }
        try store.write { tx in try tx.park(PricedProduct(id: 9, price: 1.25)) }
        try store.read { tx in
            let result = try tx.execute(below2)
            #expect(result.plan.usedIndex, "rebuilt by the write")
            #expect(result.documents.map(\.price).sorted() == [0.5, 1, 1.25, 1.5])
        }
    }

    /// Makes `NumberedBadge`'s unique index on `number` one of the 0.4 format (`v2`) holding
    /// `entries` (index key, document ID) and nothing else.
    static func writeLegacyUniqueNumberIndex(_ path: String, entries: [(key: [UInt8], id: Int64)]) throws {
        let env = try Environment.open(path: path)
        let meta = try env.openDatabase(StoreLayout.metaDatabase, key: BytesCodec.self, value: BytesCodec.self)
        let index = try env.openDatabase(StoreLayout.indexDatabase(alias: Store.defaultAlias, collection: NumberedBadge.collection, index: "number"),
                                         key: BytesCodec.self, value: BytesCodec.self)
        try env.write { txn in
            try txn.put(Array("v2\u{0}u\u{0}number".utf8),
                        forKey: Array(StoreLayout.indexMetaKey(alias: Store.defaultAlias, collection: NumberedBadge.collection, index: "number").utf8), in: meta)
            try txn.clear(index)
            for entry in entries { try txn.put(try #require(IDKind.signed.key(for: .int(entry.id))), forKey: entry.key, in: index) }
        }
        try env.close()
    }

    /// A unique index of the earlier format whose rebuild finds one value twice blocked every
    /// write to its collection, even by a type that no longer declares it: such a type drops
    /// it now, without rebuilding it.
    @Test func aLegacyIndexThatCannotBeRebuiltIsDroppedByATypeThatNoLongerDeclaresIt() throws {
        let folder = TemporaryFolder()
        do {
            let store = try Store(path: folder.path)
            try store.write { tx in for i in 0..<2 { try tx.park(UnindexedBadge(id: i, number: 2)) } }
            try store.environment.close()
        }
        // As if 0.4 had indexed the two (values it kept apart, here simply two keys).
        try Self.writeLegacyUniqueNumberIndex(folder.path, entries: [([0x10, 0], 0), ([0x10, 1], 1)])
        let store = try Store(path: folder.path)
        let declared = #expect(throws: DepotError.self) { try store.write { tx in try tx.park(NumberedBadge(id: 5, number: 7)) } }
        #expect(declared?.code == .invalidIndex && declared?.message.contains("no longer declares the index unique") == true, "\(String(describing: declared))")
        try store.write { tx in try tx.park(UnindexedBadge(id: 5, number: 7)) }
        #expect(try store.read { tx in try tx.count(UnindexedBadge.self) } == 3)
        let dynamic = DynamicObject(entity: NumberedBadge.collection, id: .int(6), fields: [("id", .int(6)), ("number", .double(2))])
        try store.write { tx in _ = try tx.park(dynamic) }
        let metaKey = StoreLayout.indexMetaKey(alias: Store.defaultAlias, collection: NumberedBadge.collection, index: "number")
        let meta = try store.environment.openDatabase(StoreLayout.metaDatabase, key: BytesCodec.self, value: BytesCodec.self)
        #expect(try store.environment.read { txn in try txn.get(Array(metaKey.utf8), in: meta) } == nil, "the index is dropped")
    }

    /// A unique index really written in the earlier format (its keys as 0.4 wrote them): not
    /// used by queries; any writer — here a schemaless one, which never reconciles a type —
    /// rebuilds it before writing, so a duplicate value is caught, not stored beside keys of the
    /// other format.
    @Test func aUniqueIndexOfTheEarlierFormatIsRebuiltByAnyWriter() throws {
        let folder = TemporaryFolder()
        let numbers: [Double] = [1.5, 2, 3]
        do {
            let store = try Store(path: folder.path)
            try store.write { tx in for (i, n) in numbers.enumerated() { try tx.park(NumberedBadge(id: i, number: n)) } }
            try store.environment.close()
        }
        do {
            // The 0.4 format: integral numbers under 0x10 (two's complement with the sign bit
            // flipped), fractional ones under 0x11 (ordered IEEE bits); the document key after it.
            func oldKey(_ d: Double) -> [UInt8] {
                let bits = d.rounded() == d ? UInt64(bitPattern: Int64(d)) ^ (1 << 63) : IndexKeyEncoding.orderedBits(d)
                return [d.rounded() == d ? 0x10 : 0x11] + withUnsafeBytes(of: bits.bigEndian) { Array($0) }
            }
            try Self.writeLegacyUniqueNumberIndex(folder.path, entries: numbers.enumerated().map { (oldKey($1), Int64($0)) })
        }
        let store = try Store(path: folder.path)
        let below = FetchRequest<NumberedBadge>().matching(\.number, .lessThan(2.5))
        try store.read { tx in
            let result = try tx.execute(below)
            #expect(!result.plan.usedIndex)
            #expect(result.documents.map(\.number).sorted() == [1.5, 2])
        }
        let duplicate = DynamicObject(entity: NumberedBadge.collection, id: .int(10), fields: [("id", .int(10)), ("number", .double(2))])
        let error = #expect(throws: DepotError.self) { try store.write { tx in _ = try tx.park(duplicate) } }
        #expect(error?.code == .uniqueIndexViolation, "\(String(describing: error))")
        let fresh = DynamicObject(entity: NumberedBadge.collection, id: .int(11), fields: [("id", .int(11)), ("number", .double(2.25))])
        try store.write { tx in _ = try tx.park(fresh) }
        try store.read { tx in
            let result = try tx.execute(below)
            #expect(result.plan.usedIndex, "rebuilt by the schemaless write")
            #expect(result.documents.map(\.number).sorted() == [1.5, 2, 2.25])
        }
    }

    /// Index definitions of the earlier format are legacy (not used by queries, rebuilt at the
    /// next write through their type); the current one is not.
    @Test func earlierIndexFormatsAreLegacy() throws {
        let current = IndexDefinition(name: "price", field: "price", unique: false)
        #expect(IndexDefinition.parse(name: "price", metaValue: current.metaValue)?.legacy == false)
        #expect(IndexDefinition.parse(name: "price", metaValue: Array("v2\u{0}m\u{0}price".utf8))?.legacy == true)
        #expect(IndexDefinition.parse(name: "price", metaValue: Array("multi".utf8))?.legacy == true)
        #expect(IndexDefinition.parse(name: "price", metaValue: Array("v9\u{0}m\u{0}price".utf8)) == nil)
    }
}
