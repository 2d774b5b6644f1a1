/// Path text helpers that never trap.
///
/// Foundation's `NSString.deletingLastPathComponent` traps on some inputs in the Linux
/// Foundation shipped with Swift 6.3 (a one-character relative path such as `"s"`: an
/// out-of-range index in `String._startOfLastPathComponent`). A user's `--path s` reached it,
/// so Depot uses this instead wherever a path comes from outside.
package enum FilePaths {
    /// The folder part of `path`, as `NSString.deletingLastPathComponent` gives it: trailing
    /// slashes are ignored; `"a"` → `""`, `"a/b"` → `"a"`, `"/a"` → `"/"`, `"/"` → `"/"`,
    /// `"a//b/"` → `"a"`, `""` → `""`.
    package static func parent(of path: String) -> String {
        var bytes = Array(path.utf8)
        let absolute = bytes.first == UInt8(ascii: "/")
        while bytes.count > 1, bytes.last == UInt8(ascii: "/") { bytes.removeLast() }
        if bytes == [UInt8(ascii: "/")] { return "/" }
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return "" }
        var end = slash
        while end > 0, bytes[end - 1] == UInt8(ascii: "/") { end -= 1 }
        if end == 0 { return absolute ? "/" : "" }
        return String(decoding: bytes[..<end], as: UTF8.self)
    }
}
