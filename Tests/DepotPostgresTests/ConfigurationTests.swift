#if Postgres
@testable import DepotPostgres
import Foundation
import Testing

/// Configuration parsing and messages: no server needed.
@Suite("PostgreSQL configuration")
struct ConfigurationTests {
    @Test func urlWithEnvironmentFallbacks() throws {
        let environment = ["PGHOST": "db.internal", "PGPORT": "6543", "PGUSER": "envuser", "PGSSLMODE": "require"]
        let config = try PostgresConfiguration(url: "postgresql://ada:s%40cret@example.org/app?schema=tenant_1&sslmode=verify-full",
                                               environment: environment)
        #expect(config.username == "ada")
        #expect(config.password == "s@cret")
        #expect(config.host == "example.org")
        #expect(config.port == 6543)
        #expect(config.database == "app")
        #expect(config.schema == "tenant_1")
        #expect(config.tls == .verifyFull)

        let fromEnvironment = try PostgresConfiguration.fromEnvironment(environment.merging(["PGPASSWORD": "pw", "PGDATABASE": "d"]) { $1 })
        #expect(fromEnvironment.host == "db.internal" && fromEnvironment.port == 6543 && fromEnvironment.username == "envuser")
        #expect(fromEnvironment.password == "pw" && fromEnvironment.database == "d" && fromEnvironment.tls == .require)
    }

    @Test func passwordsAreNeverPrinted() throws {
        let config = try PostgresConfiguration(url: "postgres://ada:hunter2secret@localhost:5432/app", environment: [:])
        #expect(!config.description.contains("hunter2secret"))
        #expect(!String(describing: config).contains("hunter2secret"))
        #expect(!String(reflecting: config).contains("hunter2secret"))
        var dumped = ""
        dump(config, to: &dumped)
        #expect(!dumped.contains("hunter2secret"))
        #expect(!PostgresDriverError.connectionUnavailable(server: config.server, detail: "x").description.contains("hunter2secret"))
        // Nothing listens on port 1: the error names the server, not the password.
        var unreachable = config
        unreachable.port = 1
        unreachable.connectTimeout = .seconds(2)
        do {
            _ = try PostgresDriver(configuration: unreachable)
            Issue.record("connecting to port 1 succeeded")
        } catch {
            #expect(String(describing: error).contains("localhost:1"))
            #expect(!String(describing: error).contains("hunter2secret"))
        }
    }

    @Test func badSettingsAreTypedErrors() {
        #expect(throws: PostgresDriverError.self) { try PostgresConfiguration(url: "mysql://x@y/z", environment: [:]) }
        #expect(throws: PostgresDriverError.self) { try PostgresConfiguration(url: "postgres://x@y/z?sslmode=maybe", environment: [:]) }
        #expect(throws: PostgresDriverError.self) { try PostgresConfiguration(url: "postgres://x@y/z?colour=blue", environment: [:]) }
        #expect(throws: PostgresDriverError.self) { try PostgresConfiguration.fromEnvironment(["PGPORT": "70000"]) }
        for bad in ["", "Upper", "1st", "a-b", "x;drop", String(repeating: "a", count: 49)] {
            #expect(throws: PostgresDriverError.invalidSchemaName(bad)) { try PostgresSchema(name: bad) }
        }
        #expect((try? PostgresSchema(name: "depot_2")) != nil)
        // PostgreSQL's own schemas were taken (tables made in information_schema by a superuser).
        for system in ["information_schema", "pg_catalog", "pg_temp", "pg_toast"] {
            let error = #expect(throws: PostgresDriverError.self) { try PostgresSchema(name: system) }
            #expect(error.map { "\($0)".contains("belongs to PostgreSQL") } == true, "\(system): \(String(describing: error))")
        }
        // A parameter given twice used the last one without a word.
        let twice = #expect(throws: PostgresDriverError.self) { try PostgresConfiguration(url: "postgres://x@y/z?schema=a&schema=b", environment: [:]) }
        #expect(twice.map { "\($0)".contains("'schema' is given more than once") } == true)
        // A URL that starts right but does not parse is not "a URL that must start with postgres://"
        // (and its text, which may hold a password, is not repeated).
        for broken in ["postgres://x:secret@y:abc/z", "postgres://x:secret@[::1/z"] {
            let error = #expect(throws: PostgresDriverError.self) { try PostgresConfiguration(url: broken, environment: [:]) }
            let text = error.map { "\($0)" } ?? ""
            #expect(text.contains("does not parse") && !text.contains("secret"), "\(broken): \(text)")
        }
    }

    @Test func callTimeoutIsValidated() throws {
        let config = try PostgresConfiguration(url: "postgres://x@y/z?call_timeout=2.5", environment: [:])
        #expect(config.callTimeout == .milliseconds(2500))
        #expect(try PostgresConfiguration(url: "postgres://x@y/z", environment: [:]).callTimeout == .seconds(30))
        for bad in ["0", "-1", "soon", "90000"] {
            #expect(throws: PostgresDriverError.self) { try PostgresConfiguration(url: "postgres://x@y/z?call_timeout=\(bad)", environment: [:]) }
        }
        var zero = config
        zero.callTimeout = .zero
        #expect(throws: PostgresDriverError.self) { try zero.validate() }
        // Refused before any connection is tried.
        #expect(throws: PostgresDriverError.invalidConfiguration("callTimeout must be at least 1 ms and at most a day")) {
            try PostgresDriver(configuration: zero)
        }
        var noConnections = config
        noConnections.maximumConnections = 0
        #expect(throws: PostgresDriverError.self) { try noConnections.validate() }
        #expect(throws: Never.self) { try config.validate() }
        // statement_timeout follows the call timeout.
        #expect(PostgresDriver.sessionSettings(config).first { $0.0 == "statement_timeout" }?.1 == "2500")
    }

    @Test func prefixSuccessor() {
        #expect(PostgresTransaction.successor(of: [0x01, 0x02]) == [0x01, 0x03])
        #expect(PostgresTransaction.successor(of: [0x01, 0xff]) == [0x02])
        #expect(PostgresTransaction.successor(of: [0xff, 0xff]) == nil)
        #expect(KeyspaceHandle(KeyspaceHandle(id: 7, multiValue: true).raw).id == 7)
        #expect(KeyspaceHandle(KeyspaceHandle(id: 7, multiValue: true).raw).multiValue)
    }
}
#endif
