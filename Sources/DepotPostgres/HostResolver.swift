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
        let lookup = Lookup()
        let resolve = resolve
        let thread = Thread { lookup.finish(resolve(host, port)) }
        thread.stackSize = 256 * 1024
        thread.start()
        guard let result = lookup.wait(until: deadline) else {
            throw .init(message: "the host name \"\(host)\" was not resolved within the connect timeout")
        }
        return try result.get()
    }

    /// One resolution's answer, handed from its thread to the waiting one. `@unchecked Sendable`:
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
    /// tried in turn (`hostaddr`; `host` stays for TLS and messages), each with an equal share
    /// of the time left, so that a first address that never answers leaves the others time.
    static func connect(_ parameters: [(String, String)], server: String, preparesStatements: Bool,
                        deadline: Date, resolver: HostResolver = .system) throws(ConnectFailure) -> LibPQConnection {
        guard let host = parameters.first(where: { $0.0 == "host" })?.1,
              !parameters.contains(where: { $0.0 == "hostaddr" }), !HostResolver.needsNoLookup(host) else {
            return try connectResolved(parameters, server: server, preparesStatements: preparesStatements, deadline: deadline)
        }
        let port = parameters.first { $0.0 == "port" }?.1 ?? ""
        let addresses = try resolver.addresses(of: host, port: port, until: deadline)
        var failures: [String] = []
        for (index, address) in addresses.enumerated() {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { break }
            let share = Date().addingTimeInterval(left / Double(addresses.count - index))
            do {
                return try connectResolved(parameters + [("hostaddr", address)], server: server,
                                           preparesStatements: preparesStatements, deadline: share)
            } catch {
                failures.append(addresses.count > 1 ? "\(address): \(error.message)" : error.message)
            }
        }
        if failures.isEmpty { failures.append("no connection within the connect timeout") }
        throw ConnectFailure(message: failures.joined(separator: "; "))
    }
}
#endif
