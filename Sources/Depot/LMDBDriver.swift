import DepotCore
import DepotLMDB

/// The default driver: an LMDB environment (durable, multi-process, snapshot reads, savepoints).
public final class LMDBDriver: StorageDriver {
    /// The environment.
    public let environment: Environment

    /// A driver over an open environment.
    public init(environment: Environment) { self.environment = environment }

    /// Transactions, snapshots, durability and several processes; savepoints unless the
    /// environment uses `writeMap` (LMDB has no child transactions with `MDB_WRITEMAP`).
    public var capabilities: StorageCapabilities {
        environment.options.unsafeDurability.contains(.writeMap)
            ? [.transactions, .snapshots, .durable, .multiProcess]
            : [.transactions, .savepoints, .snapshots, .durable, .multiProcess]
    }
    public var location: String { environment.path }
    /// The environment's logger (`EnvironmentOptions.logger`).
    public var logger: DepotLogger { environment.options.logger }
    public func read<R>(_ body: (any StorageTransaction) throws -> R) throws -> R { try environment.read { try body($0) } }
    public func write<R>(_ body: (any StorageTransaction) throws -> R) throws -> R {
        do {
            return try environment.write { try body($0) }
        } catch let error as LMDBError where Self.isWriteInWrite(error) {
            throw Self.writeInWrite
        }
    }

    /// Whether `error` is the binding's refusal of a write begun on a thread whose write is
    /// open (its advice, `txn.nested {}`, is the binding's API, not the document layer's).
    static func isWriteInWrite(_ error: LMDBError) -> Bool {
        error.code == LMDBError.deadlock.code && error.operation == "begin write transaction"
    }

    /// ``isWriteInWrite(_:)`` in the document layer's words.
    static let writeInWrite = DepotError.transactionMisuse(
        "a write inside a write on the same thread: use tx.savepoint {} in the open transaction, or end the explicit transaction (commit() or rollback()) first")
}

extension LMDBDriver: EnvironmentBackedDriver {
    /// The environment: every driver over it shares one store core.
    package var storeIdentity: ObjectIdentifier { ObjectIdentifier(environment) }

    /// Opens the meta database and every Depot database already in the file once, outside any
    /// transaction, so that read transactions find their handles cached. A read transaction
    /// cannot use a handle opened after it began, so a database first opened while others read
    /// would fail them; databases created later are opened by their write's commit.
    package func prepareForStores() throws {
        do {
            _ = try environment.openDatabase(StoreLayout.metaDatabase, create: !environment.options.readOnly)
        } catch LMDBError.notFound {
            // A read-only environment without Depot data: every look-up finds nothing.
        }
        for name in (try? environment.databaseNames()) ?? [] where name.hasPrefix(StoreLayout.reservedPrefix) {
            _ = try? environment.openDatabase(name, create: false)
        }
    }

    /// `mdb_env_info`'s last transaction ID (a read of shared memory).
    package func lastCommitID() -> Int? { try? environment.info().lastTransactionID }

    /// The environment's group commit (``Environment/write(_:)-async``'s batches).
    package func groupWrite<R: Sendable>(_ body: @escaping @Sendable (any StorageTransaction) throws -> R) async throws -> R {
        try await environment.write { txn in try body(txn) }
    }

    package func beginExplicitTransaction(readOnly: Bool) throws -> any ExplicitStorageTransaction {
        do {
            return try environment.beginTransaction(readOnly: readOnly)
        } catch let error as LMDBError where Self.isWriteInWrite(error) {
            throw Self.writeInWrite
        }
    }
}

/// LMDB's explicit transactions end with `commit()` / `abort()` of their own.
extension Transaction: ExplicitStorageTransaction {}

/// The document layer hands LMDB's errors to its callers wrapped (`DepotError` code `storage`),
/// where `catch LMDBError.<code>` still matches them.
extension LMDBError: StorageDriverError {}
