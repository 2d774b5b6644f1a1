import CLMDBBench
import Foundation

/// SplitMix64: a small seeded PRNG, so every engine gets exactly the same keys and order.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Monotonic nanoseconds (the same clock as the C baseline).
@inline(__always) func now() -> UInt64 { clmdb_now_ns() }

/// Keys 0..<n in a seeded random order.
func shuffledCounters(_ n: Int, seed: UInt64) -> [UInt64] {
    var keys = (0..<UInt64(n)).map { $0 }
    var rng = SplitMix64(seed: seed)
    keys.shuffle(using: &rng)
    return keys
}

/// n seeded random 64-bit keys (distinct with overwhelming probability; duplicates just overwrite).
func randomKeys(_ n: Int, seed: UInt64) -> [UInt64] {
    var rng = SplitMix64(seed: seed)
    return (0..<n).map { _ in rng.next() }
}

/// The 100-byte value every bulk workload stores (same bytes as the C side).
func benchValue(_ size: Int) -> [UInt8] { (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) } }

/// A scratch folder removed by `cleanup()`.
final class Scratch {
    let root: String
    private var counter = 0
    init(base: String?) throws {
        let parent = base ?? FileManager.default.temporaryDirectory.path
        try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        var template = Array((parent + "/depot-compare-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw BenchError("cannot create a scratch folder in \(parent)") }
        root = String(cString: made)
    }
    /// A new, not yet existing folder path.
    func folder(_ label: String) -> String {
        counter += 1
        return "\(root)/\(counter)-\(label)"
    }
    func remove(_ path: String) { try? FileManager.default.removeItem(atPath: path) }
    func cleanup() { try? FileManager.default.removeItem(atPath: root) }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Fails loudly when a C workload reported an error (it returns 0 then).
func checked(_ ns: UInt64, _ what: String) throws -> UInt64 {
    if ns == 0 { throw BenchError("the C workload \(what) failed (see stderr)") }
    return ns
}

func median(_ values: [Double]) -> Double {
    let s = values.sorted()
    guard !s.isEmpty else { return .nan }
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}

func percentile(_ values: [UInt64], _ p: Double) -> UInt64 {
    let s = values.sorted()
    guard !s.isEmpty else { return 0 }
    let rank = Int((p / 100 * Double(s.count)).rounded(.up)) - 1
    return s[min(max(rank, 0), s.count - 1)]
}

/// Keeps a value alive in the optimizer's eyes.
@inline(never) func blackHole<T>(_ value: T) { withExtendedLifetime(value) {} }

enum Machine {
    static var cores: Int { ProcessInfo.processInfo.activeProcessorCount }
    static var memoryGiB: Double { (Double(ProcessInfo.processInfo.physicalMemory) / Double(1 << 30) * 10).rounded() / 10 }
    static var kernel: String {
        var u = utsname()
        uname(&u)
        func field<T>(_ value: T) -> String {
            withUnsafeBytes(of: value) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
        }
        return "\(field(u.sysname)) \(field(u.release)) \(field(u.machine))"
    }
    static var cpuModel: String? {
        guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("model name") {
            return line.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) }
        }
        return nil
    }
    static var lmdbVersion: String { String(cString: clmdb_version()) }
}
