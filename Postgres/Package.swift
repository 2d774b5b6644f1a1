// swift-tools-version: 6.1
// DepotPostgres: Depot's PostgreSQL storage driver, in a package of its own so that the main
// package never depends on postgres-nio (and its SwiftNIO/TLS stack). Build and test it with
// `--package-path Postgres` (see README.md).
import PackageDescription

let package = Package(
    name: "DepotPostgres",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "DepotPostgres", targets: ["DepotPostgres"]),
        .executable(name: "depot-pg", targets: ["depot-pg"]),
    ],
    dependencies: [
        .package(name: "Depot", path: ".."),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.81.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.25.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.5.3"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        .target(
            name: "DepotPostgres",
            dependencies: [
                .product(name: "Depot", package: "Depot"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Durable single writes and point reads through the StorageDriver protocol, PostgreSQL
        // (DEPOT_POSTGRES_URL) against LMDB in a temporary folder.
        .executableTarget(
            name: "depot-postgres-bench",
            dependencies: [
                "DepotPostgres",
                .product(name: "Depot", package: "Depot"),
                .product(name: "DepotLMDB", package: "Depot"),
            ]
        ),
        // `depot`'s document commands (seed, export, query, collections, stat, kv) on a
        // PostgreSQL store: --url instead of --path.
        .executableTarget(
            name: "depot-pg",
            dependencies: [
                "DepotPostgres",
                .product(name: "Depot", package: "Depot"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "DepotPostgresTests",
            // depot-pg: built for the command-line tests, which run it.
            dependencies: ["DepotPostgres", "depot-pg", .product(name: "Depot", package: "Depot"),
                           .product(name: "DepotDriverTesting", package: "Depot")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
