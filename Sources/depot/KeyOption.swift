import ArgumentParser
import Depot
import Foundation
#if Crypto
import Crypto
import DepotCrypto
#endif

/// The key of an encrypted store (one written with `AESGCMTransform`): from a file
/// (`--key-file PATH`) or from `DEPOT_KEY`, never as a plain argument (other users see arguments
/// in `ps`). The key is 256 bits: 32 raw bytes in the file, or base64 text (in the file or in
/// `DEPOT_KEY`). Decrypting needs a depot built with `--traits Crypto`.
struct KeyOption: ParsableArguments {
    @Option(name: .customLong("key-file"), help: ArgumentHelp(
        "The key of an encrypted store: a file holding 32 bytes, or their base64 text. Default: $DEPOT_KEY (base64). Needs a depot built with --traits Crypto.",
        valueName: "file"))
    var keyFile: String?

    @Option(name: .customLong("key-id"), help: ArgumentHelp("The ID the key has in the store's AESGCMTransform (0 to 255).", valueName: "n"))
    var keyID: Int = 1

    func validate() throws {
        if let keyFile, keyFile.isEmpty { throw ValidationError("--key-file must not be empty") }
        guard (0...255).contains(keyID) else { throw ValidationError("--key-id must be 0 to 255, got \(keyID)") }
    }

    static var environmentKey: String? {
        guard let value = ProcessInfo.processInfo.environment["DEPOT_KEY"], !value.isEmpty else { return nil }
        return value
    }

    /// Whether a key was given (`--key-file` or `DEPOT_KEY`).
    var isGiven: Bool { keyFile != nil || Self.environmentKey != nil }

    /// How the user gives the key, for messages.
    static let howToGive = "pass --key-file PATH (a file holding the key) or set DEPOT_KEY (base64)"

    /// Whether this depot can decrypt (built with the `Crypto` trait).
    static var canDecrypt: Bool {
        #if Crypto
        return true
        #else
        return false
        #endif
    }

    /// The failure for a key given to a depot that cannot use it.
    static let noCrypto = CLIFailure(
        code: "cryptoUnavailable",
        message: "a key was given, but this depot was built without the Crypto trait and cannot decrypt: build it with 'swift build --traits Crypto'")

    /// The 32 key bytes, from the file or `DEPOT_KEY`; nil when no key was given. Errors name
    /// where the key came from and its size, never its bytes.
    func keyBytes() throws -> [UInt8]? {
        if let keyFile {
            // At most 4 KiB: a key is 32 bytes (44 in base64); a device or a huge file is never read to its end.
            guard let handle = FileHandle(forReadingAtPath: keyFile) else {
                throw CLIFailure(code: "keyUnreadable", message: "cannot read the key file '\(keyFile)' (missing, or not readable)")
            }
            defer { try? handle.close() }
            let data: Data
            do {
                data = try handle.read(upToCount: 4096) ?? Data()
            } catch {
                throw CLIFailure(code: "keyUnreadable", message: "cannot read the key file '\(keyFile)': \((error as NSError).localizedDescription)")
            }
            return try Self.decode(Array(data), source: "the key file '\(keyFile)'")
        }
        guard let text = Self.environmentKey else { return nil }
        return try Self.decode(Array(text.utf8), source: "DEPOT_KEY", rawAllowed: false)
    }

    /// 32 raw bytes, or base64 text of 32 bytes (surrounding white space ignored).
    static func decode(_ bytes: [UInt8], source: String, rawAllowed: Bool = true) throws -> [UInt8] {
        if rawAllowed && bytes.count == 32 { return bytes }
        let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if let decoded = Data(base64Encoded: text), decoded.count == 32 { return Array(decoded) }
        if let decoded = Data(base64Encoded: text) {
            throw CLIFailure(code: "invalidKey", message: "\(source) holds a base64 key of \(decoded.count * 8) bits; the key must have 256 (32 bytes)")
        }
        throw CLIFailure(code: "invalidKey", message: "\(source) holds \(bytes.count) bytes that are neither a 256-bit key (32 bytes) nor its base64 text")
    }

    /// The record transform that opens the store with the given key; nil when no key was given.
    func transform() throws -> (any RecordTransform)? {
        guard isGiven else { return nil }
        #if Crypto
        guard let bytes = try keyBytes() else { return nil }
        let id = UInt8(clamping: keyID)
        return try AESGCMTransform(keys: [id: SymmetricKey(data: bytes)], current: id)
        #else
        throw Self.noCrypto
        #endif
    }
}
