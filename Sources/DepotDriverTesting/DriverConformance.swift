import DepotCore
import Foundation

/// The driver conformance suite: the checks Depot's own drivers pass, run against yours.
///
/// ```swift
/// import DepotDriverTesting
///
/// @Test func myDriverConforms() throws {
///     let report = try DriverConformance.check(makeDriver: { try MyDriver(folder: freshFolder()) })
///     print(report)   // the checks that ran, and those skipped for lack of a capability
/// }
/// ```
///
/// `makeDriver` is called once per check and must return a driver over **empty** storage. The
/// suite needs no test framework: it throws a ``DriverConformanceFailure`` for the first check
/// that fails, naming the check and what was expected. Checks that need a capability the driver
/// does not claim (rollback, savepoints, snapshots) are skipped, and checked the other way where
/// that is meaningful (without ``StorageCapabilities/transactions``, a throwing write must keep
/// what it did, as the capability says).
public enum DriverConformance {
    /// One named check.
    struct Check {
        let name: String
        let needs: StorageCapabilities
        let run: (any StorageDriver, Expectations) throws -> Void
    }

    /// Every check, in order: storage-level operations first, then the document layer on top.
    static var checks: [Check] { storageChecks + documentChecks }

    /// The names of the checks the suite runs, in order.
    public static var checkNames: [String] { checks.map(\.name) }

    /// Runs every check against fresh drivers from `makeDriver`.
    ///
    /// - Returns: what ran and what was skipped.
    /// - Throws: ``DriverConformanceFailure`` for the first failing check (an error thrown by
    ///   `makeDriver` or by the driver is reported as that check's failure).
    @discardableResult
    public static func check(makeDriver: () throws -> any StorageDriver) throws -> DriverConformanceReport {
        var passed: [String] = [], skipped: [String] = []
        var location = "", capabilities: StorageCapabilities = []
        for check in checks {
            let expectations = Expectations(check: check.name)
            let driver: any StorageDriver
            do { driver = try makeDriver() } catch {
                throw DriverConformanceFailure(check: check.name, location: location, detail: "makeDriver threw: \(error)")
            }
            location = driver.location
            capabilities = driver.capabilities
            if !driver.capabilities.isSuperset(of: check.needs) {
                skipped.append(check.name)
                continue
            }
            do {
                try check.run(driver, expectations)
            } catch let failure as DriverConformanceFailure {
                throw DriverConformanceFailure(check: failure.check, location: driver.location, detail: failure.detail)
            } catch {
                throw DriverConformanceFailure(check: check.name, location: driver.location, detail: "unexpected error: \(error)")
            }
            passed.append(check.name)
        }
        return DriverConformanceReport(location: location, capabilities: capabilities, passed: passed, skipped: skipped)
    }
}

/// Fails the running check with a message.
struct Expectations {
    let check: String

    /// Throws when `condition` is false.
    func expect(_ condition: Bool, _ detail: @autoclosure () throws -> String) throws {
        if !condition { throw DriverConformanceFailure(check: check, location: "", detail: try detail()) }
    }

    /// Throws unless `body` throws.
    func expectThrows(_ detail: @autoclosure () -> String, _ body: () throws -> Void) throws {
        do { try body() } catch { return }
        throw DriverConformanceFailure(check: check, location: "", detail: detail())
    }
}

/// The first failed check of ``DriverConformance/check(makeDriver:)``.
public struct DriverConformanceFailure: Error, CustomStringConvertible, Sendable {
    /// The check's name (one of ``DriverConformance/checkNames``).
    public let check: String
    /// The driver's ``StorageDriver/location``.
    public let location: String
    /// What was expected and what happened.
    public let detail: String

    /// A failure of `check`.
    public init(check: String, location: String, detail: String) {
        self.check = check
        self.location = location
        self.detail = detail
    }

    /// `driver conformance: <check> failed on <location>: <detail>`.
    public var description: String { "driver conformance: '\(check)' failed on \(location): \(detail)" }
}

/// What ``DriverConformance/check(makeDriver:)`` ran.
public struct DriverConformanceReport: Sendable, CustomStringConvertible {
    /// The driver's location (of the last driver made).
    public let location: String
    /// The capabilities the driver claims.
    public let capabilities: StorageCapabilities
    /// The checks that ran and passed, in order.
    public let passed: [String]
    /// The checks skipped because the driver lacks a capability they need.
    public let skipped: [String]

    /// One line per outcome.
    public var description: String {
        "driver conformance on \(location): \(passed.count) passed" + (skipped.isEmpty ? "" : ", skipped: " + skipped.joined(separator: ", "))
    }
}

extension DriverConformanceFailure: LocalizedError {
    /// The ``description``: the check, the driver's location and what happened.
    public var errorDescription: String? { description }
}
