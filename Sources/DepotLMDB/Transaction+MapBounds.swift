import CLMDB
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The addresses of the used part of an environment's memory map: from the map's start to the
/// end of its last used page. LMDB hands out pointers into the map without checking them, so a
/// damaged node can describe bytes past the end of the file; touching them kills the process
/// (SIGBUS or SIGSEGV). A checker can refuse such bytes (``contains(_:)``) before reading them.
package struct UsedMapRegion: Sendable, Hashable {
    /// Address of the map's first byte.
    package var start: UInt
    /// Address one past the last byte of the last used page (never past the end of the map).
    package var end: UInt
    /// Size of a page in bytes.
    package var pageSize: Int
    /// Number of the last used page.
    package var lastPageNumber: Int

    /// Whether all of `bytes` lie inside the region. An empty buffer always does: nothing is read.
    package func contains(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count > 0 else { return true }
        guard let base = bytes.baseAddress else { return false }
        let first = UInt(bitPattern: base)
        let (last, overflow) = first.addingReportingOverflow(UInt(bytes.count))
        return !overflow && first >= start && last <= end
    }
}

extension Transaction {
    /// The used part of the memory map (`mdb_env_info` for the last used page, `mdb_env_stat`
    /// for the page size), or nil when the map's address cannot be found. Every key and value
    /// this transaction reads lies inside it unless the file is damaged.
    ///
    /// `mdb_env_info` gives the map's address only for a fixed map, so on Linux it is found in
    /// `/proc/self/maps` (the mapping of `data.mdb`'s device and inode at offset 0); elsewhere
    /// this returns nil for a map that is not fixed.
    package func usedMapRegion() throws -> UsedMapRegion? {
        _ = try liveHandle("mdb_env_info") // the transaction holds the environment's gate
        var info = MDB_envinfo()
        var pageStat = MDB_stat()
        try check(mdb_env_info(environment.handle, &info), "mdb_env_info")
        try check(mdb_env_stat(environment.handle, &pageStat), "mdb_env_stat")
        var fd: Int32 = -1
        try check(mdb_env_get_fd(environment.handle, &fd), "mdb_env_get_fd")
        let mapSize = UInt(info.me_mapsize)
        let start: UInt
        if let fixed = info.me_mapaddr {
            start = UInt(bitPattern: fixed)
        } else if let found = mappingStart(ofFile: fd) {
            start = found
        } else {
            return nil
        }
        func saturatingAdd(_ a: UInt, _ b: UInt) -> UInt {
            let (sum, overflow) = a.addingReportingOverflow(b)
            return overflow ? .max : sum
        }
        let (used, overflow) = saturatingAdd(UInt(info.me_last_pgno), 1).multipliedReportingOverflow(by: UInt(pageStat.ms_psize))
        // Never past the map itself, whatever the last page number says.
        let end = min(saturatingAdd(start, overflow ? .max : used), saturatingAdd(start, mapSize))
        return UsedMapRegion(start: start, end: end, pageSize: Int(pageStat.ms_psize), lastPageNumber: Int(clamping: info.me_last_pgno))
    }
}

/// The start address of this process's only mapping of the file open as `fd` at offset 0,
/// from `/proc/self/maps` (Linux); nil when there is none, more than one, or no such table.
private func mappingStart(ofFile fd: Int32) -> UInt? {
    var st = stat()
    guard fd >= 0, fstat(fd, &st) == 0,
          let table = try? String(contentsOfFile: "/proc/self/maps", encoding: .utf8) else { return nil }
    let device = UInt64(truncatingIfNeeded: st.st_dev)
    // Linux's dev_t encoding (glibc's gnu_dev_major / gnu_dev_minor).
    let major = ((device >> 8) & 0xfff) | ((device >> 32) & ~UInt64(0xfff))
    let minor = (device & 0xff) | ((device >> 12) & ~UInt64(0xff))
    var starts: [UInt] = []
    for line in table.split(separator: "\n") {
        // start-end perms offset major:minor inode path
        let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
        guard fields.count >= 5, UInt64(fields[4]) == UInt64(truncatingIfNeeded: st.st_ino), UInt64(fields[2], radix: 16) == 0 else { continue }
        let dev = fields[3].split(separator: ":")
        guard dev.count == 2, UInt64(dev[0], radix: 16) == major, UInt64(dev[1], radix: 16) == minor,
              let range = fields[0].split(separator: "-").first, let address = UInt(range, radix: 16) else { continue }
        starts.append(address)
    }
    return starts.count == 1 ? starts[0] : nil
}
