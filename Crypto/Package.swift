// swift-tools-version: 6.1
// DepotCrypto: a ready AES-GCM record transform for Depot stores. A package of its own (path
// dependency on the root, like Benchmarks/ and Postgres/) so that the core library and the root's
// `swift test` never build swift-crypto.
import PackageDescription

let package = Package(
    name: "DepotCrypto",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .library(name: "DepotCrypto", targets: ["DepotCrypto"]),
    ],
    dependencies: [
        .package(name: "Depot", path: ".."),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
    ],
    targets: [
        .target(name: "DepotCrypto", dependencies: [
            .product(name: "Depot", package: "Depot"),
            .product(name: "Crypto", package: "swift-crypto"),
        ]),
        .testTarget(name: "DepotCryptoTests", dependencies: ["DepotCrypto", .product(name: "Depot", package: "Depot")]),
    ],
    swiftLanguageModes: [.v6]
)
