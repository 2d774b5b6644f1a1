#if Postgres
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns a server's host name into its addresses within a connect deadline. libpq resolves
/// names with a blocking `getaddrinfo` that no deadline of ours reaches, and tries a name's
/// addresses one after another, each for as long as it takes: a hung resolver, or a first
/// address that never answers, would take the whole call. The driver resolves the name itself
/// (on a thread of its own, waited for until the deadline) and tries each address with its share
/// of the time left (see ``LibPQConnection/connect(_:server:preparesStatements:deadline:resolver:)``).
struct HostResolver: Sendable {
    /// The addresses of a host name and port (numeric, in the resolver's order), or why not.
    let resolve: @Sendable (_ host: String, _ port: String) -> Result<[String], LibPQConnection.ConnectFailure>
    /// The resolutions running now, by host and port: a connect joins one for its name instead
    /// of starting another, so that a resolver that hangs holds one thread per name, however
    /// many connects wait on it.
    private let running = Running()

    init(resolve: @escaping @Sendable (_ host: String, _ port: String) -> Result<[String], LibPQConnection.ConnectFailure>) {
        self.resolve = resolve
    }

    /// The system's resolver (`getaddrinfo`, TCP).
    static let system = HostResolver { host, port in
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, port.isEmpty ? nil : port, &hints, &list)
        guard status == 0 else {
            let reason = gai_strerror(status).map { String(cString: $0) } ?? "error \(status)"
            return .failure(.init(message: "could not resolve the host name \"\(host)\": \(reason)"))
        }
        defer { freeaddrinfo(list) }
        var addresses: [String] = []
        var entry = list
        while let current = entry {
            var text = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            if let address = current.pointee.ai_addr,
               getnameinfo(address, current.pointee.ai_addrlen, &text, socklen_t(text.count), nil, 0, NI_NUMERICHOST) == 0 {
                let numeric = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                if !addresses.contains(numeric) { addresses.append(numeric) }
            }
            entry = current.pointee.ai_next
        }
        return addresses.isEmpty ? .failure(.init(message: "the host name \"\(host)\" has no address")) : .success(addresses)
    }

    /// Whether libpq takes `host` as it is: an IP address, a Unix socket folder (or an
    /// abstract socket), or a list of hosts (libpq's own failover, left to it).
    static func needsNoLookup(_ host: String) -> Bool {
        if host.isEmpty || host.hasPrefix("/") || host.hasPrefix("@") || host.contains(",") { return true }
        var v4 = in_addr(), v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    /// The addresses of `host`, resolved on a thread of its own and waited for until `deadline`
    /// (a resolver still busy then is left to finish on its own; its answer is dropped).
    func addresses(of host: String, port: String, until deadline: Date) throws(LibPQConnection.ConnectFailure) -> [String] {
        let name = host + "\u{0}" + port
        let (lookup, isNew) = running.lookup(for: name)
        if isNew {
            let resolve = resolve, running = running
            Thread {
                let answer = resolve(host, port)
                running.remove(name)
                lookup.finish(answer)
            }.start()
        }
        guard let result = lookup.wait(until: deadline) else {
            throw .init(message: "the host name \"\(host)\" was not resolved within the connect timeout")
        }
        return try result.get()
    }

    /// The resolutions in flight. `@unchecked Sendable`: `lookups` is only touched under `lock`.
    private final class Running: @unchecked Sendable {
        private let lock = NSLock()
        private var lookups: [String: Lookup] = [:]

        /// The resolution of `name` running now, or a new one (true: the caller starts it).
        func lookup(for name: String) -> (Lookup, Bool) {
            lock.withLock {
                if let running = lookups[name] { return (running, false) }
                let lookup = Lookup()
                lookups[name] = lookup
                return (lookup, true)
            }
        }

        func remove(_ name: String) {
            lock.withLock { _ = lookups.removeValue(forKey: name) }
        }
    }

    /// One resolution's answer, handed from its thread to the waiting ones. `@unchecked Sendable`:
    /// `result` is only touched under `condition`.
    private final class Lookup: @unchecked Sendable {
        private let condition = NSCondition()
        private var result: Result<[String], LibPQConnection.ConnectFailure>?

        func finish(_ answer: Result<[String], LibPQConnection.ConnectFailure>) {
            condition.withLock {
                result = answer
                condition.broadcast()
            }
        }

        func wait(until deadline: Date) -> Result<[String], LibPQConnection.ConnectFailure>? {
            condition.withLock {
                while result == nil {
                    if !condition.wait(until: deadline) { break }
                }
                return result
            }
        }
    }
}

extension LibPQConnection {
    /// Opens a connection with libpq's connection `parameters` (keyword, value) by `deadline`,
    /// then puts it in pipeline mode (non-blocking: the caller waits with its deadline). A host
    /// name is resolved first within the deadline (see ``HostResolver``), and its addresses are
    /// tried in turn (`hostaddr`; `host` stays for TLS and messages), each waiting for the
    /// server's first answer for an equal share of the time left (as libpq's `connect_timeout`
    /// applies to each address, but within the one deadline), so that a first address that never
    /// answers leaves the others time, while a server that answered keeps the rest.
    static func connect(_ parameters: [(String, String)], server: String, preparesStatements: Bool,
                        deadline: Date, resolver: HostResolver = .system) throws(ConnectFailure) -> LibPQConnection {
        // An address given (`hostaddr`, or libpq's `PGHOSTADDR`) is libpq's to use.
        guard let host = parameters.first(where: { $0.0 == "host" })?.1,
              !parameters.contains(where: { $0.0 == "hostaddr" }), ProcessInfo.processInfo.environment["PGHOSTADDR"] == nil,
              !HostResolver.needsNoLookup(host) else {
            return try connectResolved(parameters, server: server, preparesStatements: preparesStatements, deadline: deadline)
        }
        let port = parameters.first { $0.0 == "port" }?.1 ?? ""
        let addresses = try resolver.addresses(of: host, port: port, until: deadline)
        var failures: [String] = []
        for (index, address) in addresses.enumerated() {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { break }
            // The last address waits for its answer until the deadline; a server that answered
            // keeps the time left whatever its share (see `connectResolved`).
            let share = Date().addingTimeInterval(left / Double(addresses.count - index))
            do {
                return try connectResolved(parameters + [("hostaddr", address)], server: server,
                                           preparesStatements: preparesStatements, deadline: deadline, answerBy: share)
            } catch {
                // A TLS failure is the server's (its certificate, its settings), not the
                // address's: told alone, as it is, and not tried again elsewhere.
                if PostgresDriverError.tls(libpqMessage: error.message, server: server, host: host, trust: "") != nil { throw error }
                failures.append(addresses.count > 1 ? "\(address): \(error.message)" : error.message)
            }
        }
        if failures.isEmpty { failures.append("no connection within the connect timeout") }
        throw ConnectFailure(message: failures.joined(separator: "; "))
    }
}
#endif
