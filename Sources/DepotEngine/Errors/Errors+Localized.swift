import Foundation

// `localizedDescription` of Depot's error types shows their message, not "The operation could
// not be completed"; a `DepotError` bridged to `NSError` carries its context in the user info.

extension SimpleBackendError: LocalizedError {
    /// The ``description``.
    public var errorDescription: String? { description }
}

extension DepotError: LocalizedError {
    /// The message (names what failed and where; never a stored value).
    public var errorDescription: String? { message }
}

extension DepotError: CustomNSError {
    /// `"Depot.DepotError"`.
    public static var errorDomain: String { "Depot.DepotError" }
    /// The code's position in the list of codes (stable within a version).
    public var errorCode: Int { (Code.all.firstIndex(of: code) ?? Code.all.count) + 1 }
    /// The message under `NSLocalizedDescriptionKey`, and the context under `DepotErrorCode`,
    /// `DepotErrorAlias`, `DepotErrorCollection`, `DepotErrorID`, `DepotErrorFieldPath`,
    /// `DepotErrorFile` and `DepotErrorSeedProblem`.
    public var errorUserInfo: [String: Any] {
        var info: [String: Any] = [NSLocalizedDescriptionKey: message, "DepotErrorCode": code.rawValue]
        if let alias { info["DepotErrorAlias"] = alias }
        if let collection { info["DepotErrorCollection"] = collection }
        if let id { info["DepotErrorID"] = id }
        if let fieldPath { info["DepotErrorFieldPath"] = fieldPath }
        if let file { info["DepotErrorFile"] = file }
        if let seedProblem { info["DepotErrorSeedProblem"] = seedProblem.rawValue }
        return info
    }
}
