import Foundation

/// Where a store is: an LMDB folder or the URL of a server (`postgres://…`).
enum StoreLocation: Equatable {
    /// An LMDB environment folder (holds data.mdb and lock.mdb).
    case folder(String)
    /// A server URL (`postgres://` or `postgresql://`).
    case url(String)

    /// The URL schemes of PostgreSQL stores.
    static let postgresSchemes = ["postgres", "postgresql"]

    /// The scheme of `text` when it is written as a URL (`scheme://…`), else nil.
    static func scheme(of text: String) -> String? {
        guard let range = text.range(of: "://"), range.lowerBound > text.startIndex else { return nil }
        let scheme = text[..<range.lowerBound]
        guard scheme.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == "." }) else { return nil }
        return scheme.lowercased()
    }

    /// `url` without its password, for messages (`postgres://ada:***@host/db`).
    static func redacted(_ url: String) -> String {
        guard var components = URLComponents(string: url) else {
            // Not parseable: keep the scheme and host part only up to any '@'.
            guard let at = url.lastIndex(of: "@"), let scheme = scheme(of: url) else { return url }
            return scheme + "://***" + url[at...]
        }
        if components.password != nil { components.password = "***" }
        return components.string ?? url
    }

    /// How messages name the store: the folder, or the URL without its password.
    var display: String {
        switch self {
        case .folder(let path): return path
        case .url(let url): return Self.redacted(url)
        }
    }
}
