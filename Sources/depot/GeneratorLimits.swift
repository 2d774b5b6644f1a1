import ArgumentParser
import DepotLMDB

/// Limits of the load generators (`fill`, `torture`), checked as usage errors (exit 64) before
/// anything is opened or allocated.
enum GeneratorLimits {
    /// Largest generated value: 1 GiB. A value is built in memory whole before it is written
    /// (LMDB itself accepts up to 0xFFFFFFFF bytes).
    static let maxValueSize = 1 << 30
    /// Most `fill` records: keys are numbered with nine digits.
    static let maxFillCount = 999_999_999
    /// Largest initial map size: the map's own ceiling (`EnvironmentOptions.maxMapSize`).
    static let maxMapSize = EnvironmentOptions().maxMapSize

    /// Checks a byte-size option (`--value-size`, `--payload-size`).
    static func checkValueSize(_ size: Int, option: String) throws {
        guard (0...maxValueSize).contains(size) else {
            throw ValidationError("\(option) must be 0 to \(maxValueSize) bytes (1 GiB: a value is held in memory whole), got \(size)")
        }
    }

    /// Checks `--map-size` when given.
    static func checkMapSize(_ size: Int?) throws {
        guard let size else { return }
        guard (1...maxMapSize).contains(size) else {
            throw ValidationError("--map-size must be 1 to \(maxMapSize) bytes (the map grows automatically from it), got \(size)")
        }
    }
}
