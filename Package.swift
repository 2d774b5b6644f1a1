// swift-tools-version: 6.1
import CompilerPluginSupport
import Foundation
import PackageDescription

// Platform floor: Foundation's `Predicate` and `SortDescriptor` (used by `FetchRequest`) need
// macOS 14 / iOS 17 / tvOS 17 / watchOS 10. Nothing else in the package needs more (no
// `Synchronization.Mutex`, no `String(validating:)`, both macOS 15 / iOS 18).
//
// Optional parts sit behind package traits (SE-0450), all off by default, so that an app (and the
// root's own `swift build` / `swift test`) fetches and builds none of their dependencies unless it
// enables the trait:
//
// - `Macros`: `@BinaryCodable` (product DepotMacros), on swift-syntax;
// - `Crypto`: `AESGCMTransform` (product DepotCrypto), on swift-crypto;
// - `Postgres`: the PostgreSQL driver (product DepotPostgres), on postgres-nio (SwiftNIO, NIOSSL);
//   with it, the `depot` command also opens `postgres://` stores (`--url`, `DEPOT_URL`).
//
// With `Crypto`, `depot` decrypts stores sealed with `AESGCMTransform` (`--key-file`, `DEPOT_KEY`).
//
// Each dependency below is used only through `.when(traits:)`, so SwiftPM leaves it out of a build
// without the trait. The targets of an optional part still exist in such a build, empty: their
// sources are wrapped in `#if TRAIT` (a trait is also a compilation condition).
var dependencies: [Package.Dependency] = [
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    .package(url: "https://github.com/apple/swift-log", from: "1.5.3"),
    // Trait `Macros`:
    .package(url: "https://github.com/swiftlang/swift-syntax", "600.0.1"..<"700.0.0"),
    // Trait `Crypto`:
    .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
    // Trait `Postgres`:
    .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    .package(url: "https://github.com/apple/swift-nio.git", from: "2.81.0"),
    .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.25.0"),
]

// The DocC plugin is only needed to build documentation, as in GRDB: set DEPOT_DOCS=1 (or
// SPI_BUILDER=1 on the Swift Package Index) to get `swift package generate-documentation`.
let environment = ProcessInfo.processInfo.environment
if environment["DEPOT_DOCS"] == "1" || environment["SPI_BUILDER"] == "1" {
    dependencies.append(.package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0"))
}

let macros: Set<String> = ["Macros"]
let crypto: Set<String> = ["Crypto"]
let postgres: Set<String> = ["Postgres"]

let package = Package(
    name: "Depot",
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17), .watchOS(.v10), .visionOS(.v1)],
    products: [
        // Documents on LMDB: DepotCore and its LMDB driver (what most apps import).
        .library(name: "Depot", targets: ["Depot"]),
        // The document layer over the StorageDriver protocol, without LMDB (for apps that store
        // elsewhere, e.g. PostgreSQL only: no liblmdb needed).
        .library(name: "DepotCore", targets: ["DepotCore"]),
        .library(name: "DepotLMDB", targets: ["DepotLMDB"]),
        .library(name: "DepotLogging", targets: ["DepotLogging"]),
        // The driver conformance suite, for authors of storage drivers (no test framework inside).
        .library(name: "DepotDriverTesting", targets: ["DepotDriverTesting"]),
        .executable(name: "depot", targets: ["depot"]),
        // Trait `Macros`:
        .library(name: "DepotMacros", targets: ["DepotMacros"]),
        // Trait `Crypto`:
        .library(name: "DepotCrypto", targets: ["DepotCrypto"]),
        // Trait `Postgres`:
        .library(name: "DepotPostgres", targets: ["DepotPostgres"]),
    ],
    traits: [
        .trait(name: "Macros", description: "@BinaryCodable, a generated binary codec (product DepotMacros; builds swift-syntax)."),
        .trait(name: "Crypto", description: "AESGCMTransform, AES-GCM encryption of records (product DepotCrypto; builds swift-crypto)."),
        .trait(name: "Postgres", description: "The PostgreSQL storage driver, also in the depot command (product DepotPostgres; builds postgres-nio)."),
        .default(enabledTraits: []),
    ],
    dependencies: dependencies,
    targets: [
        .systemLibrary(
            name: "CLMDB",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"]), .brew(["lmdb"])]
        ),
        // libpq (PostgreSQL's C client) for the `Postgres` trait's driver: its pipeline mode
        // sends a transaction's statements without waiting for each answer.
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"]), .brew(["libpq"])]
        ),
        // Word-sized atomics for the reader gate (Synchronization's `Atomic` is above the Apple
        // floor), and the thread-local thread number.
        .target(name: "CDepotAtomic"),
        // What the layers share without depending on each other: the logger, thread numbers.
        .target(name: "DepotSupport", dependencies: ["CDepotAtomic"]),
        .target(name: "DepotLMDB", dependencies: ["CLMDB", "CDepotAtomic", "DepotSupport"]),
        // Hardware CRC-32C (SSE 4.2, ARMv8 CRC) for the record checksums: Swift cannot emit it.
        .target(name: "CDepotCRC"),
        // The record engine: the StorageDriver protocol and its in-memory drivers, DepotError
        // (and the one mapping of codec errors), the binary codec and DocumentValue, the record
        // envelope (header, CRC-32C), opening stored records, the store's layout of keyspaces and
        // meta keys, unique IDs, the collection schema (index definitions, field paths, index
        // keys and entries), and the engine's state and operations: the transaction context
        // (collections, schemas, buffers, savepoints, meta records), the one write pipeline, delete
        // rules, schema reconciliation and index builds, collection drops, what every handle on
        // one storage shares (EngineCore, Published), change sets, the change log and the undo
        // log. The only writer of records, index entries and meta records. `package` access for
        // what only Depot's modules use; what DepotCore calls on a hot path is
        // `@usableFromInline package` with `@inlinable` accessors. Never LMDB.
        .target(name: "DepotEngine", dependencies: ["DepotSupport", "CDepotAtomic", "CDepotCRC"]),
        // The document layer: documents (their per-type facts, typed reads, references), queries,
        // kits, observers, the unit of work, over the engine (never LMDB:
        // scripts/check-layers.sh checks that its closure has no CLMDB). Re-exports DepotEngine.
        .target(name: "DepotCore", dependencies: ["DepotEngine", "DepotSupport", "CDepotAtomic"]),
        // The LMDB driver, re-exporting DepotCore: `import Depot` is documents on LMDB.
        .target(name: "Depot", dependencies: ["DepotCore", "DepotLMDB"]),
        .target(name: "DepotDriverTesting", dependencies: ["DepotCore"]),
        // swift-log adapter for DepotLogger; the core targets never depend on swift-log.
        .target(
            name: "DepotLogging",
            dependencies: ["DepotSupport", .product(name: "Logging", package: "swift-log")]
        ),
        // One command over every driver: LMDB folders always; `postgres://` URLs with the trait
        // `Postgres`; encrypted stores (AESGCMTransform) with the trait `Crypto`.
        .executableTarget(
            name: "depot",
            dependencies: [
                "Depot",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .target(name: "DepotPostgres", condition: .when(traits: postgres)),
                .target(name: "DepotCrypto", condition: .when(traits: crypto)),
                .product(name: "Crypto", package: "swift-crypto", condition: .when(traits: crypto)),
            ]
        ),

        // MARK: Trait `Macros`
        // The compiler plugin: runs inside the compiler, never linked into programs.
        .macro(
            name: "DepotMacrosPlugin",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax", condition: .when(traits: macros)),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax", condition: .when(traits: macros)),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax", condition: .when(traits: macros)),
                .product(name: "SwiftDiagnostics", package: "swift-syntax", condition: .when(traits: macros)),
            ]
        ),
        // What users import: the macro declaration (the generated code only needs `Depot`).
        .target(
            name: "DepotMacros",
            dependencies: ["DepotCore", .target(name: "DepotMacrosPlugin", condition: .when(traits: macros))]
        ),
        // Instructions per operation under callgrind (scripts/macro-instructions.sh; synchronous:
        // valgrind cannot run an async main).
        .executableTarget(name: "depot-macro-bench", dependencies: ["Depot", "DepotMacros"]),

        // MARK: Trait `Crypto`
        .target(
            name: "DepotCrypto",
            dependencies: ["DepotCore", .product(name: "Crypto", package: "swift-crypto", condition: .when(traits: crypto))]
        ),

        // MARK: Trait `Postgres`
        .target(
            name: "DepotPostgres",
            dependencies: [
                "DepotCore",
                "DepotSupport",
                .target(name: "CLibPQ", condition: .when(traits: postgres)),
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: postgres)),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: postgres)),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: postgres)),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio", condition: .when(traits: postgres)),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: postgres)),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: postgres)),
            ]
        ),
        // Durable single writes and point reads through the StorageDriver protocol, PostgreSQL
        // (DEPOT_POSTGRES_URL) against LMDB in a temporary folder.
        .executableTarget(name: "depot-postgres-bench", dependencies: ["Depot", "DepotLMDB", "DepotPostgres"]),

        // MARK: Tests
        // Helpers shared by the test targets (temporary folders, child processes).
        .target(name: "DepotTestSupport", path: "Tests/DepotTestSupport"),
        .testTarget(name: "DepotLMDBTests", dependencies: ["DepotLMDB", "depot", "DepotTestSupport"]),
        .testTarget(name: "DepotTests", dependencies: ["Depot", "DepotCore", "DepotEngine", "DepotDriverTesting", "depot", "DepotTestSupport"]),
        .testTarget(name: "DepotCLITests", dependencies: ["Depot", "depot", "DepotTestSupport"]),
        .testTarget(name: "DepotLoggingTests", dependencies: ["DepotLogging", "Depot", "DepotTestSupport"]),
        // Empty without their trait (`swift test --traits Macros`, …).
        .testTarget(
            name: "DepotMacrosTests",
            dependencies: [
                "DepotMacros", "Depot",
                .target(name: "DepotMacrosPlugin", condition: .when(traits: macros)),
                // The generic assertions take a failure handler, so failures reach Swift Testing (the
                // SwiftSyntaxMacrosTestSupport ones call XCTFail, which Swift Testing never sees).
                .product(name: "SwiftSyntaxMacrosGenericTestSupport", package: "swift-syntax", condition: .when(traits: macros)),
                .product(name: "SwiftSyntaxMacroExpansion", package: "swift-syntax", condition: .when(traits: macros)),
            ]
        ),
        .testTarget(
            name: "DepotCryptoTests",
            dependencies: [
                // depot: built for the command-line tests, which run it with the key of an encrypted store.
                "DepotCrypto", "Depot", "DepotLMDB", "depot", "DepotTestSupport",
                .product(name: "Crypto", package: "swift-crypto", condition: .when(traits: crypto)),
            ]
        ),
        .testTarget(
            name: "DepotPostgresTests",
            // depot: built for the command-line tests, which run it on postgres:// URLs.
            dependencies: [
                "DepotPostgres", "depot", "Depot", "DepotDriverTesting", "DepotTestSupport",
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: postgres)),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
