#if Postgres
@testable import DepotPostgres
import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A connection opens within its connect deadline whatever the host name's resolution does: a
/// resolver that hangs fails the connect at the deadline, and a first address that never
/// answers leaves the next one its share of the time (see ``HostResolver``).
@Suite("PostgreSQL connect deadline", .enabled(if: PostgresTestServer.isAvailable, "needs DEPOT_POSTGRES_URL"))
struct ConnectDeadlineTests {
    /// libpq's parameters for the test server, under the host name `name` (which only the
    /// test's resolver knows), and the server's port.
    private static func parameters(named name: String) throws -> (parameters: [(String, String)], port: Int) {
        let configuration = try PostgresConfiguration(url: try #require(PostgresTestServer.url))
        var endpoint = try #require(configuration.endpoints.first)
        let port = endpoint.port
        endpoint.host = name
        return (PostgresDriver.libpqParameters(configuration, endpoint: endpoint), port)
    }

    /// Why a connect with `resolver` failed within `seconds` (nil: it connected), and how long
    /// it took.
    private static func failure(_ parameters: [(String, String)], within seconds: Double,
                                resolver: HostResolver) -> (message: String?, elapsed: Duration) {
        let start = ContinuousClock.now
        do {
            let connection = try LibPQConnection.connect(parameters, server: "test", preparesStatements: false,
                                                         deadline: Date().addingTimeInterval(seconds), resolver: resolver)
            connection.close()
            return (nil, ContinuousClock.now - start)
        } catch {
            return (error.message, ContinuousClock.now - start)
        }
    }

    @Test func aResolverThatHangsFailsTheConnectAtItsDeadline() throws {
        let (parameters, _) = try Self.parameters(named: "depot-hanging-resolver.test")
        let resolver = HostResolver { _, _ in
            Thread.sleep(forTimeInterval: 3)
            return .success(["127.0.0.1"])
        }
        let (message, elapsed) = Self.failure(parameters, within: 0.3, resolver: resolver)
        #expect(message?.contains("not resolved within the connect timeout") == true, "\(message ?? "connected")")
        #expect(elapsed < .seconds(2), "the connect ended at its deadline, not the resolver's")
    }

    /// Connects that wait on a hanging resolution of the same name share it: one thread
    /// resolves, however many connects time out on it.
    @Test func connectsToOneNameShareItsResolution() throws {
        let (parameters, _) = try Self.parameters(named: "depot-shared-resolution.test")
        let calls = Atomic(0)
        let resolver = HostResolver { _, _ in
            calls.add(1, ordering: .relaxed)
            Thread.sleep(forTimeInterval: 1.5)
            return .failure(.init(message: "no such name"))
        }
        let outcome = concurrently(threads: 4, steps: 2) { _, _ in
            do {
                let connection = try LibPQConnection.connect(parameters, server: "test", preparesStatements: false,
                                                             deadline: Date().addingTimeInterval(0.2), resolver: resolver)
                connection.close()
            } catch let error as LibPQConnection.ConnectFailure {
                guard error.message.contains("not resolved within the connect timeout") else { throw error }
            }
        }
        #expect(outcome.finished && outcome.failures.isEmpty, "\(outcome.failures)")
        #expect(calls.load(ordering: .relaxed) == 1, "one resolution for 8 connects: \(calls.load(ordering: .relaxed))")
    }

    @Test func aSilentFirstAddressLeavesTheNextOneTime() throws {
        let (parameters, port) = try Self.parameters(named: "depot-two-addresses.test")
        // 127.0.0.2 (loopback, where the server does not listen) accepts connections on the
        // server's port and never answers: libpq's startup waits there until its share ends.
        let silent = try #require(SilentListener(address: "127.0.0.2", port: UInt16(port)))
        defer { silent.close() }
        let resolver = HostResolver { _, _ in .success(["127.0.0.2", "127.0.0.1"]) }
        let start = ContinuousClock.now
        let connection = try LibPQConnection.connect(parameters, server: "test", preparesStatements: false,
                                                     deadline: Date().addingTimeInterval(4), resolver: resolver)
        defer { connection.close() }
        let elapsed = ContinuousClock.now - start
        #expect(connection.isUsable)
        #expect(elapsed >= .milliseconds(1_500) && elapsed < .seconds(4), "the first address had half the time: \(elapsed)")
    }

    /// An address whose server answered keeps the time left, past its share: a server slow to
    /// finish the startup (here: one that sends the first bytes of a message and stalls) is not
    /// given up for the next address at its share.
    @Test func anAddressThatAnsweredKeepsTheTimeLeft() throws {
        let (parameters, port) = try Self.parameters(named: "depot-answering-address.test")
        // The first bytes of an authentication request whose rest never comes (the test
        // server's URL says sslmode=disable: no TLS request comes first). 127.0.0.3, so that
        // it never shares an address with the silent test's listener.
        let stalling = try #require(SilentListener(address: "127.0.0.3", port: UInt16(port), answer: [0x52, 0, 0]))
        defer { stalling.close() }
        let resolver = HostResolver { _, _ in .success(["127.0.0.3", "127.0.0.1"]) }
        let (message, elapsed) = Self.failure(parameters, within: 2, resolver: resolver)
        // Connected: the answering address was given up at its share for the next one.
        #expect(message?.contains("127.0.0.3") == true && message?.contains("127.0.0.1") == false, "\(message ?? "connected")")
        #expect(elapsed >= .milliseconds(1_800), "it kept the whole time left")
    }

    @Test func addressesAndSocketFoldersAreNotLookedUp() {
        #expect(HostResolver.needsNoLookup("127.0.0.1") && HostResolver.needsNoLookup("::1"))
        #expect(HostResolver.needsNoLookup("/var/run/postgresql") && HostResolver.needsNoLookup("a,b"))
        #expect(!HostResolver.needsNoLookup("db.internal") && !HostResolver.needsNoLookup("localhost"))
    }
}

/// A TCP socket listening on `address:port` that accepts (in the kernel's backlog) and never
/// reads or answers; with `answer`, a thread accepts the first connection (within 5 s), writes
/// those bytes to it and holds it open until ``close()``.
private final class SilentListener: @unchecked Sendable {
    private var descriptor: Int32
    private let accepted = Mutex<Int32>(-1)

    init?(address: String, port: UInt16, answer: [UInt8]? = nil) {
        #if canImport(Glibc)
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { return nil }
        var yes: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var socketAddress = sockaddr_in()
        socketAddress.sin_family = sa_family_t(AF_INET)
        socketAddress.sin_port = port.bigEndian
        guard inet_pton(AF_INET, address, &socketAddress.sin_addr) == 1 else { close(); return nil }
        let bound = withUnsafePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(descriptor, 16) == 0 else { close(); return nil }
        guard let answer else { return }
        let listening = descriptor
        Thread { [self] in
            var ready = pollfd(fd: listening, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, 5_000) == 1 else { return }
            let connection = accept(listening, nil, nil)
            guard connection >= 0 else { return }
            _ = answer.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            accepted.withLock { $0 = connection }
        }.start()
    }

    func close() {
        let connection = accepted.withLock { held in
            defer { held = -1 }
            return held
        }
        for socket in [connection, descriptor] where socket >= 0 {
            #if canImport(Glibc)
            _ = Glibc.close(socket)
            #else
            _ = Darwin.close(socket)
            #endif
        }
        descriptor = -1
    }
}
#endif
