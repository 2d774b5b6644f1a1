// swift-tools-version: 6.1
import Foundation
import PackageDescription

// Platform floor: Foundation's `Predicate` and `SortDescriptor` (used by `FetchRequest`) need
// macOS 14 / iOS 17 / tvOS 17 / watchOS 10. Nothing else in the package needs more (no
// `Synchronization.Mutex`, no `String(validating:)`, both macOS 15 / iOS 18).
var dependencies: [Package.Dependency] = [
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    .package(url: "https://github.com/apple/swift-log", from: "1.5.0"),
]

// The DocC plugin is only needed to build documentation, as in GRDB: set DEPOT_DOCS=1 (or
// SPI_BUILDER=1 on the Swift Package Index) to get `swift package generate-documentation`.
let environment = ProcessInfo.processInfo.environment
if environment["DEPOT_DOCS"] == "1" || environment["SPI_BUILDER"] == "1" {
    dependencies.append(.package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0"))
}

let package = Package(
    name: "Depot",
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17), .watchOS(.v10), .visionOS(.v1)],
    products: [
        .library(name: "Depot", targets: ["Depot"]),
        .library(name: "DepotLMDB", targets: ["DepotLMDB"]),
        .library(name: "DepotLogging", targets: ["DepotLogging"]),
        // The driver conformance suite, for authors of storage drivers (no test framework inside).
        .library(name: "DepotDriverTesting", targets: ["DepotDriverTesting"]),
        .executable(name: "depot", targets: ["depot"]),
    ],
    dependencies: dependencies,
    targets: [
        .systemLibrary(
            name: "CLMDB",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"]), .brew(["lmdb"])]
        ),
        // Word-sized atomics for the reader gate (Synchronization's `Atomic` is above the Apple floor).
        .target(name: "CDepotAtomic"),
        .target(name: "DepotLMDB", dependencies: ["CLMDB", "CDepotAtomic"]),
        // Hardware CRC-32C (SSE 4.2, ARMv8 CRC) for the record checksums: Swift cannot emit it.
        .target(name: "CDepotCRC"),
        .target(name: "Depot", dependencies: ["DepotLMDB", "CDepotCRC", "CDepotAtomic"]),
        .target(name: "DepotDriverTesting", dependencies: ["Depot"]),
        // swift-log adapter for DepotLogger; the core targets never depend on swift-log.
        .target(
            name: "DepotLogging",
            dependencies: ["DepotLMDB", .product(name: "Logging", package: "swift-log")]
        ),
        .executableTarget(
            name: "depot",
            dependencies: [
                "Depot",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Helpers shared by the test targets (temporary folders, child processes).
        .target(name: "DepotTestSupport", path: "Tests/DepotTestSupport"),
        .testTarget(name: "DepotLMDBTests", dependencies: ["DepotLMDB", "depot", "DepotTestSupport"]),
        .testTarget(name: "DepotTests", dependencies: ["Depot", "DepotDriverTesting", "depot", "DepotTestSupport"]),
        .testTarget(name: "DepotCLITests", dependencies: ["Depot", "depot", "DepotTestSupport"]),
        .testTarget(name: "DepotLoggingTests", dependencies: ["DepotLogging", "Depot", "DepotTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
