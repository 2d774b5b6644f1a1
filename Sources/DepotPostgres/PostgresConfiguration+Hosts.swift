#if Postgres
import Foundation

extension PostgresConfiguration {
    /// One more server to try, after ``host`` and ``port``, when a new connection is opened.
    public struct Endpoint: Sendable, Equatable {
        /// Host name or address (or a folder holding the server's socket).
        public var host: String
        /// TCP port.
        public var port: Int

        /// An endpoint.
        public init(host: String, port: Int = 5432) {
            self.host = host
            self.port = port
        }
    }

    /// Which server a new connection must reach, as libpq's `target_session_attrs`.
    public enum TargetSession: String, Sendable, CaseIterable {
        /// Any server that accepts the connection (the default).
        case any
        /// A server that accepts writes: neither a standby nor `default_transaction_read_only`.
        case readWrite = "read-write"
        /// A server that is not in recovery (not a standby).
        case primary
    }

    /// Every server a new connection tries, in order: ``host``:``port`` first, then
    /// ``alternateHosts``.
    public var endpoints: [Endpoint] { [Endpoint(host: host, port: port)] + alternateHosts }

    /// Splits the host list of a libpq URL (`postgres://user@h1:5432,h2:5433/db`): the URL
    /// with only the first host (for `URLComponents`) and the others.
    static func splitHosts(_ url: String) throws -> (url: String, others: [Endpoint]) {
        guard let schemeEnd = url.range(of: "://") else { return (url, []) }
        let rest = url[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        let hostsStart = authority.lastIndex(of: "@").map { authority.index(after: $0) } ?? authority.startIndex
        let hosts = authority[hostsStart...].split(separator: ",", omittingEmptySubsequences: false)
        guard hosts.count > 1 else { return (url, []) }
        let others = try hosts.dropFirst().map { try endpoint(String($0)) }
        let first = String(url[..<hostsStart]) + hosts[0] + String(url[authorityEnd...])
        return (first, others)
    }

    /// `host`, `host:port`, `[v6]` or `[v6]:port`.
    static func endpoint(_ text: String) throws -> Endpoint {
        var host = Substring(text), port = 5432
        if let colon = text.lastIndex(of: ":"), !text.hasSuffix("]"), text.hasPrefix("[") || !text[..<colon].contains(":") {
            guard let number = Int(text[text.index(after: colon)...]), (1...65535).contains(number) else {
                throw PostgresDriverError.invalidConfiguration("a host in the URL has no valid port")
            }
            host = text[..<colon]
            port = number
        }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        guard !host.isEmpty else { throw PostgresDriverError.invalidConfiguration("a host in the URL is empty") }
        return Endpoint(host: String(host), port: port)
    }

    /// `target_session_attrs`.
    static func targetSession(_ text: String) throws -> TargetSession {
        guard let target = TargetSession(rawValue: text) else {
            throw PostgresDriverError.invalidConfiguration("unsupported target_session_attrs '\(text)' (any, read-write or primary)")
        }
        return target
    }
}
#endif
