// swift-tools-version: 6.1
// A libFuzzer target over Depot's binary document decoder: a package of its own (like
// Benchmarks/) built only with -sanitize=fuzzer (its main hands over to libFuzzer). Build and run (RELIABILITY.md):
//   swift build --package-path Fuzz -c debug -Xswiftc -sanitize=fuzzer,address
//   Fuzz/.build/debug/DepotFuzz -max_total_time=60 -max_len=4096
import PackageDescription

let package = Package(
    name: "DepotFuzz",
    // The root's floor is macOS 14 / iOS 17 / tvOS 17 / watchOS 10 / visionOS 1; libFuzzer runs on
    // Linux and macOS only, so only macOS is named. A development package, never a dependency of apps.
    platforms: [.macOS(.v14)],
    dependencies: [.package(name: "Depot", path: "..")],
    targets: [
        .executableTarget(
            name: "DepotFuzz",
            dependencies: [.product(name: "Depot", package: "Depot")]
        ),
    ]
)
