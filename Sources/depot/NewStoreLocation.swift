import Depot
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A `--path` as it was before a command that may create a store there: which folders were
/// missing. A failed import that created them removes them again when they are still empty.
///
/// Store files are never removed: between the check and a failure another process may have
/// opened the new store and written to it, and deleting its files would lose that work. So a
/// store is opened only once there is something valid to write, and in the rare failure after
/// that (a document the store refuses) the new, empty store stays.
struct NewStoreLocation {
    let path: String
    /// The folders that did not exist, deepest first; nil when a store (`data.mdb`) existed.
    let missingFolders: [String]?

    init(_ path: String) {
        self.path = path
        guard !FileManager.default.fileExists(atPath: path + "/data.mdb") else {
            missingFolders = nil
            return
        }
        var folders: [String] = []
        var current = path
        while !current.isEmpty, !FileManager.default.fileExists(atPath: current) {
            folders.append(current)
            let parent = FilePaths.parent(of: current)
            guard parent != current else { break }
            current = parent
        }
        missingFolders = folders
    }

    /// Removes the folders that were missing, deepest first, each only if it is empty (`rmdir`).
    func removeCreatedFolders() {
        for folder in missingFolders ?? [] { _ = rmdir(folder) }
    }
}
