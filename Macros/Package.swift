// swift-tools-version: 6.1
// Depot's `@BinaryCodable` macro: a package of its own so that the main package never depends on
// swift-syntax (and the root `swift test` stays fast). Build and test it with
// `swift test --package-path Macros` (see README.md).
import CompilerPluginSupport
import PackageDescription

let package = Package(
    name: "DepotMacros",
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17), .watchOS(.v10), .visionOS(.v1)],
    products: [
        .library(name: "DepotMacros", targets: ["DepotMacros"]),
    ],
    dependencies: [
        .package(name: "Depot", path: ".."),
        .package(url: "https://github.com/swiftlang/swift-syntax", "600.0.1"..<"700.0.0"),
    ],
    targets: [
        // The compiler plugin: runs inside the compiler, never linked into programs.
        .macro(
            name: "DepotMacrosPlugin",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
            ]
        ),
        // What users import: the macro declaration (the generated code only needs `Depot`).
        .target(
            name: "DepotMacros",
            dependencies: ["DepotMacrosPlugin", .product(name: "Depot", package: "Depot")]
        ),
        // Instruction counts under callgrind (synchronous: valgrind cannot run an async main).
        .executableTarget(
            name: "depot-macro-bench",
            dependencies: ["DepotMacros", .product(name: "Depot", package: "Depot")]
        ),
        .testTarget(
            name: "DepotMacrosTests",
            dependencies: [
                "DepotMacros",
                "DepotMacrosPlugin",
                .product(name: "Depot", package: "Depot"),
                // The generic assertions take a failure handler, so failures reach Swift Testing (the
                // SwiftSyntaxMacrosTestSupport ones call XCTFail, which Swift Testing never sees).
                .product(name: "SwiftSyntaxMacrosGenericTestSupport", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacroExpansion", package: "swift-syntax"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
