/// A logger for Depot's own events, with no dependency: a minimum level and a closure.
///
/// Depot logs what helps operate it — map growth, retries, group-commit batches (debug),
/// errors in background work (error) — and never a stored key's value or a document's content.
/// Pass one in ``EnvironmentOptions/logger`` (``Depot`` stores use their environment's logger):
///
/// ```swift
/// var options = EnvironmentOptions()
/// options.logger = DepotLogger(minimumLevel: .debug) { event in
///     print("[\(event.level)] \(event.message) \(event.metadata)")
/// }
/// let env = try Environment.open(path: "./data", options: options)
/// ```
///
/// The `DepotLogging` product adapts a swift-log `Logger`: `DepotLogger(logger)`.
/// Loggers compare equal when they are copies of the same logger with the same minimum level.
public struct DepotLogger: Sendable, Hashable {
    /// How important an event is (the levels of swift-log, in increasing order).
    public enum Level: Int, Sendable, Hashable, Comparable, CaseIterable, CustomStringConvertible {
        /// Very detailed tracing.
        case trace
        /// Statistics useful when tuning (group-commit batches).
        case debug
        /// Noteworthy events (map growth).
        case info
        /// Unusual but handled conditions.
        case notice
        /// Something may need attention (a retry).
        case warning
        /// An operation failed and nobody else will report it (background work).
        case error
        /// The store cannot go on.
        case critical

        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }

        /// The level's name: `debug`, `error`, …
        public var description: String {
            switch self {
            case .trace: "trace"
            case .debug: "debug"
            case .info: "info"
            case .notice: "notice"
            case .warning: "warning"
            case .error: "error"
            case .critical: "critical"
            }
        }
    }

    /// One logged event.
    public struct Event: Sendable {
        /// Its level.
        public var level: Level
        /// What happened (never contains stored values).
        public var message: String
        /// Structured details: `path`, `operation`, sizes, counts, error codes.
        public var metadata: [String: String]
        /// The emitting module: `DepotLMDB` or `Depot`.
        public var source: String
        /// Where the event was logged.
        public var file: String
        /// The function that logged it.
        public var function: String
        /// The line that logged it.
        public var line: UInt
    }

    /// Events below this level are dropped before their message is built.
    public var minimumLevel: Level
    private let sink: Sink?

    /// Holds the closure; its identity makes loggers comparable.
    private final class Sink: Sendable {
        let handler: @Sendable (Event) -> Void
        init(_ handler: @escaping @Sendable (Event) -> Void) { self.handler = handler }
    }

    /// A logger that hands every event at `minimumLevel` or above to `handler` (called on the
    /// thread that logs: keep it fast and never block on Depot from it).
    public init(minimumLevel: Level = .info, _ handler: @escaping @Sendable (Event) -> Void) {
        self.minimumLevel = minimumLevel
        self.sink = Sink(handler)
    }

    private init() {
        minimumLevel = .critical
        sink = nil
    }

    /// A logger that drops everything (the default).
    public static let disabled = DepotLogger()

    /// Whether an event at `level` would be handed to the closure.
    public func isEnabled(_ level: Level) -> Bool { sink != nil && level >= minimumLevel }

    /// Logs an event; `message` and `metadata` are only evaluated when the level is enabled.
    public func log(_ level: Level, _ message: @autoclosure () -> String,
                    metadata: @autoclosure () -> [String: String] = [:], source: String = "DepotLMDB",
                    file: String = #fileID, function: String = #function, line: UInt = #line) {
        guard let sink, level >= minimumLevel else { return }
        sink.handler(Event(level: level, message: message(), metadata: metadata(), source: source,
                           file: file, function: function, line: line))
    }

    public static func == (lhs: DepotLogger, rhs: DepotLogger) -> Bool {
        lhs.minimumLevel == rhs.minimumLevel && lhs.sink === rhs.sink
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(minimumLevel)
        hasher.combine(sink.map(ObjectIdentifier.init))
    }
}
