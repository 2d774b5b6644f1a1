import DepotLMDB
import Foundation

/// Named, ordered migrations of stored documents, in the spirit of GRDB's `DatabaseMigrator`.
///
/// ```swift
/// var migrator = Migrator()
/// migrator.register("v2: employees have a rating") { m in
///     try m.addField("rating", default: .int(3), in: "Employee")
///     try m.renameField("salary", to: "pay", in: "Employee")
/// }
/// migrator.register("v3: contractors are employees") { m in
///     try m.migrateAll(from: "Contractor", to: "Employee") { doc in doc }   // references follow
/// }
/// try migrator.migrate(store)
/// ```
///
/// Each migration runs once per alias, in registration order, in one write transaction that also
/// records it (meta key `migration/<alias>/<name>`): a crash leaves the store before or after
/// a migration, never inside one, and the next `migrate` resumes with the first one not
/// recorded. Steps work on stored documents as ``DocumentValue``s, without the old Swift types,
/// and write through the record pipeline (indexes, sync status and change sets stay right).
///
/// Additive changes need no migration: new optional fields read as nil, and a field with a
/// declared default (``Document/fieldDefaults``) is filled in when an older record lacks it.
public struct Migrator: Sendable {
    private var migrations: [(name: String, body: @Sendable (MigrationContext) throws -> Void)] = []

    /// An empty migrator.
    public init() {}

    /// Registers a migration. Names must be unique; order is registration order.
    public mutating func register(_ name: String, _ body: @escaping @Sendable (MigrationContext) throws -> Void) {
        migrations.append((name, body))
    }

    /// The registered names, in order.
    public var names: [String] { migrations.map(\.name) }

    /// The migrations already applied to the alias of `store`, in the order they were applied.
    public func appliedMigrations(in store: Store) throws -> [String] {
        try store.read { tx in try Self.applied(tx) }
    }

    /// Runs every migration not yet applied to the alias of `store`, each in its own write
    /// transaction. Returns the names it ran.
    ///
    /// - Throws: ``DepotError`` with code ``DepotError/Code/invalidState`` for a duplicate name; the
    ///   error of a failing step (that migration is rolled back; earlier ones stay applied).
    @discardableResult
    public func migrate(_ store: Store) throws -> [String] {
        var seen = Set<String>()
        for m in migrations where !seen.insert(m.name).inserted {
            throw DepotError.invalidState("migration '\(m.name)' is registered twice")
        }
        var ran: [String] = []
        for migration in migrations {
            let didRun = try store.write { tx -> Bool in
                let done = try Self.applied(tx)
                if done.contains(migration.name) { return false }
                try migration.body(MigrationContext(transaction: tx))
                let key = Array((StoreLayout.migrationPrefix(alias: tx.alias) + migration.name).utf8)
                var order = [UInt8]()
                withUnsafeBytes(of: UInt64(done.count).bigEndian) { order.append(contentsOf: $0) }
                try tx.context.txn.put(order, forKey: key, in: try tx.context.writableMeta())
                return true
            }
            if didRun { ran.append(migration.name) }
        }
        return ran
    }

    private static func applied(_ tx: DocumentTransaction) throws -> [String] {
        let prefix = StoreLayout.migrationPrefix(alias: tx.alias)
        return try tx.context.metaEntries(prefix: Array(prefix.utf8))
            .map { (name: String(decoding: $0.key.dropFirst(prefix.utf8.count), as: UTF8.self),
                    order: $0.value.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }) }
            .sorted { $0.order < $1.order }
            .map(\.name)
    }
}
