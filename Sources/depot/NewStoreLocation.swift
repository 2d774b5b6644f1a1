import Depot
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A `--path` as it was before a command that may create a store there: whether a store existed,
/// and which folders were missing. A failed import uses it to take back the empty store it made.
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
            let parent = (current as NSString).deletingLastPathComponent
            guard parent != current else { break }
            current = parent
        }
        missingFolders = folders
    }

    /// Removes what opening `store` created here, when there was no store before and it holds
    /// no documents: its data and lock files, then the folders that were missing (only if empty).
    /// Without a store (opening failed or never happened), only empty missing folders are removed.
    func removeCreatedStore(_ store: Store?) {
        guard let missingFolders else { return }
        if let store {
            guard (try? store.aliases().isEmpty) == true else { return }
            try? store.environment.close()
            for name in ["data.mdb", "lock.mdb"] { _ = unlink(path + "/" + name) }
        }
        for folder in missingFolders { _ = rmdir(folder) }
    }
}
