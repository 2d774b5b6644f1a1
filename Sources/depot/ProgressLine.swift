import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A progress line on standard error, drawn only when standard error is a terminal (and
/// `TERM` is not `dumb`): nothing extra reaches pipes and logs. Redraws at most ten times a
/// second; ``finish()`` erases it so the summary that follows starts on a clean line.
final class ProgressLine: @unchecked Sendable {
    // @unchecked Sendable: the mutable state is only touched with `lock` held.
    private let lock = NSLock()
    private let label: String
    private let unit: String
    private let enabled: Bool
    private var lastDraw: UInt64 = 0
    private let started = DispatchTime.now().uptimeNanoseconds
    private var drawn = false
    /// The total count of items, when known.
    let totalItems: Int?
    /// The total bytes, when known.
    let totalBytes: Int?

    init(_ label: String, unit: String, totalItems: Int? = nil, totalBytes: Int? = nil) {
        self.label = label
        self.unit = unit
        self.totalItems = totalItems
        self.totalBytes = totalBytes
        let term = ProcessInfo.processInfo.environment["TERM"] ?? ""
        enabled = isatty(2) == 1 && term != "dumb"
    }

    /// Shows `items` (and `bytes`) done, with `note` after them; throttled unless `force`.
    func update(items: Int, bytes: Int? = nil, note: String = "", force: Bool = false) {
        guard enabled else { return }
        lock.withLock { draw(items: items, bytes: bytes, note: note, force: force) }
    }

    private func draw(items: Int, bytes: Int?, note: String, force: Bool) {
        let now = DispatchTime.now().uptimeNanoseconds
        if !force && now - lastDraw < 100_000_000 { return }
        lastDraw = now
        var text = label
        let fraction: Double? = if let totalBytes, totalBytes > 0, let bytes {
            Double(bytes) / Double(totalBytes)
        } else if let totalItems, totalItems > 0 {
            Double(items) / Double(totalItems)
        } else {
            nil
        }
        if let fraction {
            let clamped = min(1, max(0, fraction))
            let filled = Int(clamped * 24)
            text += " [" + String(repeating: "█", count: filled) + String(repeating: "·", count: 24 - filled) + "]"
            text += String(format: " %3d%%", Int(clamped * 100))
        }
        text += "  " + Self.count(items) + (totalItems.map { "/" + Self.count($0) } ?? "") + " " + unit
        if let bytes { text += "  " + Self.size(bytes) + (totalBytes.map { "/" + Self.size($0) } ?? "") }
        text += String(format: "  %.1f s", Double(now - started) / 1e9)
        if !note.isEmpty { text += "  " + note }
        let width = Self.terminalWidth()
        if text.count > width - 1 { text = String(text.prefix(max(10, width - 2))) + "…" }
        StandardError.write("\r\u{1B}[K" + text)
        drawn = true
    }

    /// Erases the line.
    func finish() {
        lock.withLock {
            guard enabled, drawn else { return }
            StandardError.write("\r\u{1B}[K")
            drawn = false
        }
    }

    static func count(_ n: Int) -> String {
        let digits = String(n)
        var out = ""
        for (i, c) in digits.reversed().enumerated() {
            if i > 0 && i % 3 == 0 && c != "-" { out.append(",") }
            out.append(c)
        }
        return String(out.reversed())
    }

    static func size(_ bytes: Int) -> String {
        let b = Double(bytes)
        if b < 1024 { return "\(bytes) B" }
        if b < 1024 * 1024 { return String(format: "%.1f KiB", b / 1024) }
        if b < 1024 * 1024 * 1024 { return String(format: "%.1f MiB", b / 1024 / 1024) }
        return String(format: "%.2f GiB", b / 1024 / 1024 / 1024)
    }

    private static func terminalWidth() -> Int {
        var size = winsize()
        if ioctl(2, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        return 80
    }
}
