import Foundation

/// Named, ordered migrations of stored documents, in the spirit of GRDB's `DatabaseMigrator`.
///
/// ```swift
/// var migrator = Migrator()
/// try migrator.register("v2: employees have a rating") { m in
///     try m.addField("rating", default: .int(3), in: "Employee")
///     try m.renameField("salary", to: "pay", in: "Employee")
/// }
/// try migrator.register("v3: contractors are employees") { m in
///     try m.migrateAll(from: "Contractor", to: "Employee") { doc in doc }   // references follow
/// }
/// try migrator.migrate(store)
/// ```
///
/// Each migration runs once per alias, in registration order, in one write transaction that also
/// records it (meta key `migration/<alias>/<name>`): a crash leaves the store before or after
/// a migration, never inside one, and the next `migrate` resumes with the first one not
/// recorded. Steps work on stored documents as `DocumentValue`s, without the old Swift types,
/// and write through the record pipeline (indexes, sync status and change sets stay right).
///
/// A name can be registered once: a second ``register(_:_:)`` with the same name throws
/// `DepotError.Code/duplicateMigration`. ``completedMigrations(in:)`` and
/// ``hasBeenSuperseded(in:)`` tell an app whether a store is behind, up to date, or already
/// migrated by a newer version of the app (a migration applied that this migrator does not know).
///
/// Additive changes need no migration: new optional fields read as nil, and a field with a
/// declared default (``Document/fieldDefaults``) is filled in when an older record lacks it.
public struct Migrator: Sendable {
    private var migrations: [(name: String, body: @Sendable (MigrationContext) throws -> Void)] = []

    /// An empty migrator.
    public init() {}

    /// Registers a migration, to run after those registered before it.
    ///
    /// - Parameters:
    ///   - name: The migration's name, recorded in the store once it has run; unique in this
    ///     migrator.
    ///   - body: The migration's steps, run in one write transaction.
    /// - Throws: `DepotError` with code `DepotError.Code/duplicateMigration` when `name` is
    ///   already registered (nothing is registered then).
    public mutating func register(_ name: String, _ body: @escaping @Sendable (MigrationContext) throws -> Void) throws {
        if migrations.contains(where: { $0.name == name }) {
            throw DepotError(code: .duplicateMigration,
                             message: "a migration named '\(name)' is already registered; each migration needs its own name")
        }
        migrations.append((name, body))
    }

    /// The registered names, in order.
    public var names: [String] { migrations.map(\.name) }

    /// The migrations already applied to the alias of `store`, in the order they were applied
    /// (including any this migrator does not know).
    public func appliedMigrations(in store: Store) throws -> [String] {
        try store.read { tx in try Self.applied(tx) }
    }

    /// The registered migrations already applied to the alias of `store`, in registration order.
    public func completedMigrations(in store: Store) throws -> [String] {
        let applied = Set(try appliedMigrations(in: store))
        return names.filter(applied.contains)
    }

    /// Whether every registered migration has been applied to the alias of `store`.
    public func hasCompletedMigrations(in store: Store) throws -> Bool {
        let applied = Set(try appliedMigrations(in: store))
        return names.allSatisfy(applied.contains)
    }

    /// Whether the alias of `store` has a migration applied that this migrator does not know:
    /// the store was migrated by a newer version of the app (as GRDB's `hasBeenSuperseded`).
    public func hasBeenSuperseded(in store: Store) throws -> Bool {
        let known = Set(names)
        return try appliedMigrations(in: store).contains { !known.contains($0) }
    }

    /// Runs every migration not yet applied to the alias of `store`, each in its own write
    /// transaction. Returns the names it ran.
    ///
    /// A migration is not undoable, and one that runs clears the undo history of `store`
    /// (``Store/enableUndo(levels:)``): undoing it would bring the documents back in their
    /// earlier shape while the store records the migration as applied, and an earlier step would
    /// restore documents as they were before it.
    ///
    /// - Throws: the error of a failing step (that migration is rolled back; earlier ones stay
    ///   applied).
    @discardableResult
    public func migrate(_ store: Store) throws -> [String] {
        var ran: [String] = []
        // Also when a later migration fails: those that ran are not undoable either.
        defer { if !ran.isEmpty { store.undoHistory?.removeAll() } }
        for migration in migrations {
            let didRun = try store.write { tx -> Bool in
                let done = try Self.applied(tx)
                if done.contains(migration.name) { return false }
                tx.context.undoLog = nil // not undoable (see above)
                try migration.body(MigrationContext(transaction: tx))
                try tx.context.recordMigration(migration.name, alias: tx.alias, order: UInt64(done.count))
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
