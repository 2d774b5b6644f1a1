/// How an identifier is laid out as a key, recorded per collection.
public enum IDKind: String, Sendable, Codable, Hashable {
    /// UTF-8 bytes.
    case string
    /// A signed integer: 8 bytes big-endian with the sign bit flipped (sorts numerically).
    case signed
    /// An unsigned integer: 8 bytes big-endian.
    case unsigned
    /// 16 bytes.
    case uuid
    /// 32 bytes of SHA-256 over the document's encoded content (unidentified documents).
    case content
}
