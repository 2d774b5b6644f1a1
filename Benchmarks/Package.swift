// swift-tools-version: 6.1
// Depot's benchmarks: a package of its own so that the main package never depends on GRDB or
// package-benchmark. Build and run it with `--package-path Benchmarks` (see README.md).
import PackageDescription

import class Foundation.ProcessInfo

// The document workloads call the Depot document layer (product `Depot`) through
// Sources/depot-compare/DocumentWorkloads.swift. While that module is being reworked and does not
// build, set DEPOT_COMPARE_NO_DOCUMENTS=1 to build depot-compare against DepotLMDB alone (the
// "documents" column is then n/a).
let withDocuments = ProcessInfo.processInfo.environment["DEPOT_COMPARE_NO_DOCUMENTS"] == nil

let package = Package(
    name: "DepotBenchmarks",
    // Above the root's floor (macOS 14 / iOS 17) on purpose: depot-compare's read-scaling workload
    // uses Synchronization.Mutex. A development package, never a dependency of apps.
    platforms: [.macOS(.v15), .iOS(.v18)],
    dependencies: [
        // The root package with its `Macros` trait (`@BinaryCodable` for the document workloads).
        .package(name: "Depot", path: "..", traits: ["Macros"]),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.0"),
    ],
    targets: [
        // The same workloads written straight on liblmdb: the baseline every ratio divides by.
        .target(
            name: "CLMDBBench",
            path: "Sources/CLMDBBench",
            linkerSettings: [.linkedLibrary("lmdb")]
        ),
        .executableTarget(
            name: "depot-compare",
            dependencies: [
                "CLMDBBench",
                .product(name: "DepotLMDB", package: "Depot"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ] + (withDocuments ? [.product(name: "Depot", package: "Depot"),
                                  .product(name: "DepotMacros", package: "Depot")] : []),
            path: "Sources/depot-compare",
            swiftSettings: withDocuments ? [] : [.define("DEPOT_COMPARE_NO_DOCUMENTS")]
        ),
        // Per-document cost at n, 10n and 100n (observer on/off, autosave off): flat curves.
        .executableTarget(
            name: "depot-scaling",
            dependencies: [.product(name: "Depot", package: "Depot")],
            path: "Sources/depot-scaling"
        ),
        .executableTarget(
            name: "DepotBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "DepotLMDB", package: "Depot"),
            ],
            path: "Benchmarks/DepotBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
