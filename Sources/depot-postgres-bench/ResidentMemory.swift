#if Postgres
import Foundation

/// This process's resident memory (`/proc/self/statm`), sampled while writers run: a write path
/// that keeps something per commit shows as a steady growth per commit (the PostgreSQL driver
/// kept every transaction until 2026-12-06: 2.5–3.2 KB per write).
enum ResidentMemory {
    /// Resident bytes now; nil where `/proc/self/statm` cannot be read (not Linux).
    static func bytes() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * sysconf(Int32(_SC_PAGESIZE))
    }

    /// The growth per commit between two samples (`nil` unless both were read and commits were
    /// made between them).
    static func perCommit(from early: (bytes: Int?, commits: Int), to late: (bytes: Int?, commits: Int)) -> Double? {
        guard let before = early.bytes, let after = late.bytes, late.commits > early.commits else { return nil }
        return Double(after - before) / Double(late.commits - early.commits)
    }
}
#endif
