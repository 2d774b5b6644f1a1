#if Postgres
import Depot
@testable import DepotPostgres
import Foundation
import Testing

/// The PEM file of the CA that issued the test server's certificate.
let tlsTestRoot = ProcessInfo.processInfo.environment["DEPOT_POSTGRES_TLS_ROOT"].flatMap { $0.isEmpty ? nil : $0 }

/// TLS against the test server, which `scripts/with-postgres.sh` starts with `ssl = on` and a
/// certificate naming `localhost` only (no IP address), issued by a throwaway CA whose PEM file
/// is `DEPOT_POSTGRES_TLS_ROOT`. Each mode behaves as libpq's `sslmode` of the same name, and a
/// failed check is a ``PostgresDriverError/tlsFailure(server:detail:)`` that says which check
/// failed.
@Suite(.enabled(if: PostgresTestServer.isAvailable && tlsTestRoot != nil,
                "needs DEPOT_POSTGRES_URL and DEPOT_POSTGRES_TLS_ROOT (scripts/with-postgres.sh)"))
struct TLSTests {
    static let root = tlsTestRoot

    /// The test server's settings with `mode`, host `host` and roots `roots`; a short connect
    /// timeout, so that a failure is reported quickly.
    static func configuration(_ mode: PostgresConfiguration.TLSMode, host: String = "localhost",
                              roots: String? = TLSTests.root) throws -> PostgresConfiguration {
        var configuration = try PostgresConfiguration(url: PostgresTestServer.url ?? "")
        configuration.host = host
        configuration.tls = mode
        configuration.rootCertificatePath = roots
        configuration.schema = PostgresTestServer.uniqueSchema()
        configuration.connectTimeout = .seconds(10)
        return configuration
    }

    /// Whether the driver's connection is encrypted, as the server reports it.
    static func encrypted(_ configuration: PostgresConfiguration) throws -> Bool {
        let driver = try PostgresDriver(configuration: configuration)
        defer {
            try? driver.dropSchema()
            driver.close()
        }
        let flags = try driver.withSession { session in
            session.leaveChained()
            return try session.integers("SELECT ssl::int::bigint FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
        }
        return flags == [1]
    }

    /// The error opening a driver with `configuration` throws (nil when it opened).
    static func failure(_ configuration: PostgresConfiguration) -> (any Error)? {
        do {
            let driver = try PostgresDriver(configuration: configuration)
            driver.close()
            return nil
        } catch {
            return error
        }
    }

    @Test func verifyFullConnectsToTheNamedHostWithItsRoots() throws {
        #expect(try Self.encrypted(Self.configuration(.verifyFull)))
    }

    @Test func requireAndPreferEncryptWithoutChecks() throws {
        // By IP address, which the certificate does not name: no check, as libpq's `require`.
        #expect(try Self.encrypted(Self.configuration(.require, host: "127.0.0.1", roots: nil)))
        #expect(try Self.encrypted(Self.configuration(.prefer, host: "127.0.0.1", roots: nil)))
        #expect(try !Self.encrypted(Self.configuration(.disable, host: "127.0.0.1", roots: nil)))
    }

    @Test func verifyFullRefusesAnUntrustedCertificate() throws {
        // The system's roots do not include the throwaway CA.
        let error = Self.failure(try Self.configuration(.verifyFull, roots: nil))
        guard case .tlsFailure(let server, let detail)? = error as? PostgresDriverError else {
            Issue.record("expected tlsFailure, got \(String(describing: error))")
            return
        }
        #expect(server.contains("localhost"))
        #expect(detail.contains("certificate"), "\(detail)")
        #expect(detail.contains("not trusted"), "\(detail)")
        #expect(!String(describing: error).contains(try Self.configuration(.verifyFull).password ?? "\u{0}"))
    }

    @Test func verifyFullRefusesACertificateForAnotherHost() throws {
        // Trusted, but issued for `localhost`, not for the address connected to.
        let error = Self.failure(try Self.configuration(.verifyFull, host: "127.0.0.1"))
        guard case .tlsFailure(let server, let detail)? = error as? PostgresDriverError else {
            Issue.record("expected tlsFailure, got \(String(describing: error))")
            return
        }
        #expect(server.contains("127.0.0.1"))
        #expect(detail.contains("does not name"), "\(detail)")
        #expect(detail.contains("127.0.0.1"), "\(detail)")
    }

    @Test func requireRefusesAServerWithoutTLS() throws {
        // What a server with `ssl = off` answers to the request for TLS: "N".
        let server = try RefusingTLSServer()
        var configuration = try Self.configuration(.require, host: "127.0.0.1", roots: nil)
        configuration.port = server.port
        let error = Self.failure(configuration)
        server.stop()
        guard case .tlsFailure(let name, let detail)? = error as? PostgresDriverError else {
            Issue.record("expected tlsFailure, got \(String(describing: error))")
            return
        }
        #expect(name.contains("127.0.0.1:\(server.port)"))
        #expect(detail.contains("does not offer TLS"), "\(detail)")
        #expect(server.answered, "the client asked for TLS")
    }

    @Test func aMissingRootFileIsAConfigurationError() throws {
        let error = Self.failure(try Self.configuration(.verifyFull, roots: "/nonexistent/depot-roots.pem"))
        guard case .invalidConfiguration(let detail)? = error as? PostgresDriverError else {
            Issue.record("expected invalidConfiguration, got \(String(describing: error))")
            return
        }
        #expect(detail.contains("/nonexistent/depot-roots.pem"), "\(detail)")
    }
}

/// A listener on 127.0.0.1 that answers one connection's request for TLS with "N" (as a
/// PostgreSQL server without TLS does), then closes it.
final class RefusingTLSServer: @unchecked Sendable {
    let port: Int
    private let socket: Int32
    private let thread: Thread
    private let state = NSLock()
    private var answeredRequest = false
    /// Whether a client sent the 8-byte TLS request. It is set before the answer is written: a
    /// client that read the answer may have failed its connect, and its test checked this,
    /// before this thread returned from `write`.
    var answered: Bool { state.withLock { answeredRequest } }

    init() throws {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        guard fd >= 0, bound == 0, listen(fd, 4) == 0,
              withUnsafeMutablePointer(to: &address, { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }) == 0 else {
            close(fd)
            throw PostgresDriverError.invalidConfiguration("the test listener could not start (errno \(errno))")
        }
        socket = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        let box = Box()
        thread = Thread { box.server?.serveOne() }
        box.server = self
        thread.start()
    }

    private final class Box: @unchecked Sendable { weak var server: RefusingTLSServer? }

    private func serveOne() {
        let client = accept(socket, nil, nil)
        guard client >= 0 else { return }
        defer { close(client) }
        var request = [UInt8](repeating: 0, count: 8)
        var got = 0
        while got < 8 {
            let n = request.withUnsafeMutableBytes { read(client, $0.baseAddress! + got, 8 - got) }
            if n <= 0 { return }
            got += n
        }
        // Length 8, code 80877103: SSLRequest.
        guard request == [0, 0, 0, 8, 0x04, 0xD2, 0x16, 0x2F] else { return }
        state.withLock { answeredRequest = true }
        var no: UInt8 = UInt8(ascii: "N")
        guard write(client, &no, 1) == 1 else { return }
        var rest = [UInt8](repeating: 0, count: 256)
        _ = rest.withUnsafeMutableBytes { read(client, $0.baseAddress!, 256) }
    }

    /// Stops listening (a connection being served is finished first).
    func stop() {
        shutdown(socket, Int32(SHUT_RDWR))
        close(socket)
    }
}
#endif
