// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Depot",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "Depot", targets: ["Depot"]),
        .library(name: "DepotLMDB", targets: ["DepotLMDB"]),
        .executable(name: "depot", targets: ["depot"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CLMDB",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"]), .brew(["lmdb"])]
        ),
        .target(name: "DepotLMDB", dependencies: ["CLMDB"]),
        .target(name: "Depot", dependencies: ["DepotLMDB"]),
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
        .testTarget(name: "DepotTests", dependencies: ["Depot", "depot", "DepotTestSupport"]),
        .testTarget(name: "DepotCLITests", dependencies: ["Depot", "depot", "DepotTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
