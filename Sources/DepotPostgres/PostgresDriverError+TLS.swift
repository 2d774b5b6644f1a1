#if Postgres
import NIOSSL
import PostgresNIO

extension PostgresDriverError {
    /// The ``tlsFailure(server:detail:)`` that `error`, postgres-nio's failure to open a
    /// connection to `host` (a change notices' connection), stands for; nil when it is not about TLS. `trust` names what the
    /// certificate was checked against. The detail says which check failed in the words of
    /// libpq's `sslmode`, never BoringSSL's message (it holds paths of the build).
    static func tls(_ error: any Error, server: String, host: String?, trust: String) -> PostgresDriverError? {
        guard let error = error as? PSQLError else { return nil }
        if error.code == .sslUnsupported {
            return .tlsFailure(server: server, detail: "the server does not offer TLS, which sslmode=require and verify-full need")
        }
        guard error.code == .connectionError || error.code == .failedToAddSSLHandler, let underlying = error.underlying else {
            return nil
        }
        if let extra = underlying as? NIOSSLExtraError {
            if extra == .failedToValidateHostname || extra == .serverHostnameImpossibleToMatch {
                return .tlsFailure(server: server, detail: "the server's certificate does not name the host '\(host ?? "")' "
                                   + "that was connected to (sslmode=verify-full checks the name, and so does verify-ca in Depot: it is read as verify-full)")
            }
            return .tlsFailure(server: server, detail: "TLS could not start (\(extra.description))")
        }
        guard let ssl = underlying as? NIOSSLError else { return nil }
        guard case .handshakeFailed(let boring) = ssl else {
            return .tlsFailure(server: server, detail: "the TLS connection failed (\(caseName(of: ssl)))")
        }
        let reasons = Self.reasons(boring)
        if reasons.contains("CERTIFICATE_VERIFY_FAILED") {
            return .tlsFailure(server: server, detail: "the server's certificate is not trusted: it does not chain to \(trust), "
                               + "or it expired or is not valid yet (sslmode=verify-full checks it)")
        }
        return .tlsFailure(server: server, detail: "the TLS handshake failed (\(reasons.isEmpty ? "no reason given" : reasons.joined(separator: ", ")))")
    }

    /// The ``tlsFailure(server:detail:)`` that libpq's message for a connection to `host` that
    /// did not open stands for; nil when it is not about TLS. Worded as ``tls(_:server:host:trust:)``.
    static func tls(libpqMessage message: String, server: String, host: String?, trust: String) -> PostgresDriverError? {
        if message.contains("does not support SSL") {
            return .tlsFailure(server: server, detail: "the server does not offer TLS, which sslmode=require and verify-full need")
        }
        if message.contains("does not match host name") {
            return .tlsFailure(server: server, detail: "the server's certificate does not name the host '\(host ?? "")' "
                               + "that was connected to (sslmode=verify-full checks the name, and so does verify-ca in Depot: it is read as verify-full)")
        }
        if message.contains("certificate verify failed") || message.contains("root certificate file") {
            return .tlsFailure(server: server, detail: "the server's certificate is not trusted: it does not chain to \(trust), "
                               + "or it expired or is not valid yet (sslmode=verify-full checks it)")
        }
        if let range = message.range(of: "SSL error: ") {
            return .tlsFailure(server: server, detail: "the TLS handshake failed (\(message[range.upperBound...]))")
        }
        return nil
    }

    /// What ``tls(_:server:host:trust:)`` says the certificate was checked against.
    static func tlsTrust(rootCertificatePath: String?) -> String {
        rootCertificatePath.map { "the roots in '\($0)'" } ?? "the system's trusted roots (set sslrootcert for others)"
    }

    /// BoringSSL's reason codes in `error` (`CERTIFICATE_VERIFY_FAILED`, …): the upper-case word
    /// after `OPENSSL_internal:` in each message.
    private static func reasons(_ error: BoringSSLError) -> [String] {
        guard case .sslError(let errors) = error else { return [caseName(of: error)] }
        return errors.compactMap { entry in
            let text = entry.description
            guard let range = text.range(of: "OPENSSL_internal:") else { return nil }
            let reason = text[range.upperBound...].prefix { $0.isUppercase || $0.isNumber || $0 == "_" }
            return reason.isEmpty ? nil : String(reason)
        }
    }

    /// The name of an enum case, without its associated values.
    private static func caseName(of value: Any) -> String {
        String(String(describing: value).prefix { $0 != "(" })
    }
}
#endif
