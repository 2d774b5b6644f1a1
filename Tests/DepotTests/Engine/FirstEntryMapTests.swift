import Testing
@testable import DepotEngine

@Suite("First-entry map")
struct FirstEntryMapTests {
    private func target(_ i: Int) -> (TransactionContext.CollectionName, RecordTarget) {
        let alias = i % 2 == 0 ? "default" : "other"
        let collection = "c\(i)"
        return (.init(alias: alias, collection: collection),
                RecordTarget(alias: alias, collection: collection, keyspace: Keyspace(name: collection, handle: UInt32(i)), kind: .string, depth: i % 3, slot: nil))
    }

    /// Whatever is set, replaced and removed — the first target included, whose place another
    /// then takes — reads back as a dictionary holding the same would.
    @Test(arguments: [1, 2, 5, 12])
    func readsBackAsADictionaryWould(count: Int) {
        var targets = FirstEntryMap<TransactionContext.CollectionName, RecordTarget>()
        var model: [TransactionContext.CollectionName: RecordTarget] = [:]
        func check() {
            for i in 0..<(count + 2) {
                let (name, _) = target(i)
                #expect(targets[name] === model[name])
                // An equal name of other storage finds the same target.
                #expect(targets[.init(alias: String(name.alias), collection: "c" + String(i))] === model[name])
            }
            #expect(Set(targets.map { ObjectIdentifier($0.value) }) == Set(model.values.map { ObjectIdentifier($0) }))
            #expect(Array(targets.values).count == model.count)
        }
        for i in 0..<count {
            let (name, t) = target(i)
            targets[name] = t
            model[name] = t
            check()
        }
        // Replace the first, then remove it (another takes its place), then one of the others.
        let (firstName, _) = target(0)
        let replacement = RecordTarget(alias: firstName.alias, collection: firstName.collection, keyspace: Keyspace(name: "r", handle: 99),
                                       kind: .signed, depth: 0, slot: nil)
        targets[firstName] = replacement
        model[firstName] = replacement
        check()
        targets[firstName] = nil
        model[firstName] = nil
        check()
        if count > 2 {
            let (name, _) = target(count - 1)
            targets[name] = nil
            model[name] = nil
            check()
        }
        targets.removeAll { $0.depth >= 1 }
        model = model.filter { $0.value.depth < 1 }
        check()
        let (name, t) = target(count + 1)
        targets[name] = t
        model[name] = t
        check()
        targets.removeAll(keepingCapacity: true)
        model.removeAll()
        check()
    }
}
