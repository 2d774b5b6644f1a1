import DepotSupport
import Logging

extension DepotLogger {
    /// A Depot logger that forwards to a swift-log `Logger`, at the logger's level.
    ///
    /// ```swift
    /// import Depot
    /// import DepotLogging
    /// import Logging
    ///
    /// var log = Logger(label: "app.depot")
    /// log.logLevel = .debug
    /// var options = StoreOptions()
    /// options.environment.logger = DepotLogger(log)
    /// let store = try Store(path: "./data", options: options)
    /// ```
    ///
    /// Events keep their metadata, source module, file, function and line. The minimum level is
    /// read once, here: set `logLevel` before creating the adapter.
    public init(_ logger: Logger) {
        self.init(minimumLevel: DepotLogger.Level(logger.logLevel)) { event in
            logger.log(level: Logger.Level(event.level), "\(event.message)",
                       metadata: event.metadata.mapValues { .string($0) },
                       source: event.source, file: event.file, function: event.function, line: event.line)
        }
    }
}

extension DepotLogger.Level {
    /// The Depot level of a swift-log level.
    public init(_ level: Logger.Level) {
        switch level {
        case .trace: self = .trace
        case .debug: self = .debug
        case .info: self = .info
        case .notice: self = .notice
        case .warning: self = .warning
        case .error: self = .error
        case .critical: self = .critical
        }
    }
}

extension Logger.Level {
    /// The swift-log level of a Depot level.
    public init(_ level: DepotLogger.Level) {
        switch level {
        case .trace: self = .trace
        case .debug: self = .debug
        case .info: self = .info
        case .notice: self = .notice
        case .warning: self = .warning
        case .error: self = .error
        case .critical: self = .critical
        }
    }
}
