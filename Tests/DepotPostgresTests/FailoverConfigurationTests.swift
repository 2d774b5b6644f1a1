#if Postgres
@testable import DepotPostgres
import Foundation
import Testing

/// Several hosts in one URL (libpq's form) and `target_session_attrs`: no server needed.
@Suite("PostgreSQL configuration with several hosts")
struct FailoverConfigurationTests {
    @Test func urlWithSeveralHosts() throws {
        let config = try PostgresConfiguration(
            url: "postgres://ada:pa%2Css@db1.internal:5432,db2.internal:5433,[::1]:5434,db4/app?target_session_attrs=read-write",
            environment: [:])
        #expect(config.host == "db1.internal" && config.port == 5432)
        #expect(config.password == "pa,ss")
        #expect(config.database == "app")
        #expect(config.alternateHosts == [.init(host: "db2.internal", port: 5433), .init(host: "::1", port: 5434), .init(host: "db4", port: 5432)])
        #expect(config.endpoints.count == 4)
        #expect(config.targetSession == .readWrite)
        #expect(config.description == "postgres://ada@db1.internal:5432,db2.internal:5433,::1:5434,db4:5432/app#depot")
        #expect(!config.description.contains("pa,ss"))

        let single = try PostgresConfiguration(url: "postgres://ada@db1.internal:6000/app", environment: [:])
        #expect(single.alternateHosts.isEmpty && single.targetSession == .any && single.port == 6000)
    }

    @Test func badHostListsAndTargetsAreConfigurationErrors() {
        #expect(throws: PostgresDriverError.self) { try PostgresConfiguration(url: "postgres://a@h1,h2:99999/db", environment: [:]) }
        #expect(throws: PostgresDriverError.self) { try PostgresConfiguration(url: "postgres://a@h1,/db", environment: [:]) }
        #expect(throws: PostgresDriverError.self) { try PostgresConfiguration(url: "postgres://a@h1/db?target_session_attrs=standby", environment: [:]) }
    }

    /// No server answers on ports 1 and 2: the error names every host, never the password.
    @Test func everyHostRefusedIsOneError() {
        var config = PostgresConfiguration(host: "127.0.0.1", port: 1, username: "ada", password: "hunter2secret", tls: .disable)
        config.alternateHosts = [.init(host: "127.0.0.1", port: 2)]
        config.connectTimeout = .seconds(2)
        do {
            _ = try PostgresDriver(configuration: config)
            Issue.record("connecting to ports 1 and 2 succeeded")
        } catch {
            let text = String(describing: error)
            #expect(text.contains("127.0.0.1:1,127.0.0.1:2"))
            #expect(!text.contains("hunter2secret"))
        }
    }
}
#endif
