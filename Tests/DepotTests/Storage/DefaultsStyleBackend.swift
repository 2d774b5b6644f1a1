import Depot
import Foundation

// The README's UserDefaults-style driver, verbatim: a dictionary saved as one property-list file
// stands in for UserDefaults on Linux.
final class FileDefaults: SimpleStorageBackend, @unchecked Sendable {
    private let lock = NSLock()
    private let file: URL
    private var values: [String: Data]

    init(file: URL) throws {
        self.file = file
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        let data = FileManager.default.contents(atPath: file.path)
        values = try data.map { try PropertyListDecoder().decode([String: Data].self, from: $0) } ?? [:]
    }

    func save(_ data: Data, forKey key: String) throws { try update { $0[key] = data } }
    func load(forKey key: String) throws -> Data? { lock.withLock { values[key] } }
    func delete(forKey key: String) throws { try update { $0[key] = nil } }
    func keys() throws -> [String] { lock.withLock { Array(values.keys) } }

    private func update(_ change: (inout [String: Data]) -> Void) throws {
        try lock.withLock {
            change(&values)
            try PropertyListEncoder().encode(values).write(to: file, options: .atomic)
        }
    }
}
