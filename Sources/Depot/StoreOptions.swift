import DepotCore
import DepotLMDB

/// How a ``Store`` opens its environment.
public struct StoreOptions: Sendable {
    /// The LMDB environment options (map size, readers, …). `maxDatabases` defaults to 1,024
    /// here: each collection of each alias is a named database.
    public var environment: EnvironmentOptions
    /// Whether parks and deletes made outside a transaction commit at once (the default), or
    /// collect in a unit of work that ``Store/save()`` commits (GarageStorage's autosave).
    public var autosave: Bool = true
    /// A transform every document and key/value record passes through on its way to and from
    /// storage (encryption: see ``RecordTransform``). All handles of a folder in a process share
    /// the first one given.
    public var recordTransform: (any RecordTransform)?
    /// How dates look in exported JSON and seed files (stored dates are always exact).
    public var dateStrategy: DateStrategy = .iso8601

    /// The default options.
    public init() {
        environment = EnvironmentOptions()
        environment.maxDatabases = 1024
    }
}
