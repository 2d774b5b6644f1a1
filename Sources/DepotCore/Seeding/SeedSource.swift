import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where a seed file comes from: a local file inside the root folder, or a remote URL.
enum SeedSource: Hashable {
    case file(String)   // resolved absolute path
    case remote(URL)

    /// How the source is named in messages and progress.
    func display(root: String) -> String {
        switch self {
        case .file(let path):
            return path.hasPrefix(root + "/") ? String(path.dropFirst(root.count + 1)) : path
        case .remote(let url):
            return url.absoluteString
        }
    }
}

/// Resolves links and reads seed files, keeping every file inside the root and every limit.
final class SeedReader {
    let root: String
    let options: SeedOptions
    private(set) var filesRead = 0
    private(set) var bytesRead = 0

    init(root: String, options: SeedOptions) {
        self.root = root
        self.options = options
    }

    /// The real path of `path` (symlinks resolved), or nil when it does not exist.
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Whether `path` (resolved) lies inside the root folder, comparing whole path components.
    func isInsideRoot(_ path: String) -> Bool {
        let rootParts = root.split(separator: "/"), parts = path.split(separator: "/")
        return parts.count > rootParts.count && Array(parts.prefix(rootParts.count)) == rootParts
    }

    /// Resolves a `seedFile` link written in `from`.
    func resolve(seedFile link: String, from: SeedSource, place: (String, String)) throws -> SeedSource {
        func fail(_ kind: DepotError.SeedProblem, _ detail: String) -> DepotError {
            DepotError.seedFailed(kind, file: place.0, jsonPath: place.1, detail: detail)
        }
        if link.isEmpty { throw fail(.invalidSeed, "seedFile is empty") }
        if link.hasPrefix("/") { throw fail(.absolutePath, "seedFile '\(link)' is an absolute path; links must be relative to the linking file") }
        switch from {
        case .remote(let base):
            guard let url = URL(string: link, relativeTo: base)?.absoluteURL else { throw fail(.invalidSeed, "seedFile '\(link)' is not a valid relative link") }
            return try resolve(seedURL: url.absoluteString, place: place)
        case .file(let current):
            let directory = FilePaths.parent(of: current)
            let joined = (directory as NSString).appendingPathComponent(link)
            let standardized = (joined as NSString).standardizingPath
            if !isInsideRoot(standardized) {
                throw fail(.outsideRoot, "seedFile '\(link)' leads outside the seed folder '\(root)'")
            }
            guard let resolved = Self.realPath(standardized) else {
                throw fail(.missingFile, "seedFile '\(link)' does not exist")
            }
            if !isInsideRoot(resolved) {
                throw fail(.outsideRoot, "seedFile '\(link)' is a symbolic link that leads outside the seed folder")
            }
            return .file(resolved)
        }
    }

    /// Resolves a `seedUrl` link.
    func resolve(seedURL text: String, place: (String, String)) throws -> SeedSource {
        func fail(_ kind: DepotError.SeedProblem, _ detail: String) -> DepotError {
            DepotError.seedFailed(kind, file: place.0, jsonPath: place.1, detail: detail)
        }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased() else {
            throw fail(.invalidSeed, "seedUrl '\(text)' is not a URL")
        }
        if scheme == "file" {
            let path = (url.path as NSString).standardizingPath
            guard isInsideRoot(path), let resolved = Self.realPath(path) else {
                throw fail(Self.realPath(path) == nil && isInsideRoot(path) ? .missingFile : .outsideRoot,
                           "seedUrl '\(text)' is not a file inside the seed folder")
            }
            if !isInsideRoot(resolved) { throw fail(.outsideRoot, "seedUrl '\(text)' leads outside the seed folder") }
            return .file(resolved)
        }
        if scheme == "bundleresource", let range = text.range(of: "://") {
            // DLData's `bundleResource://Name.seed`: a resource of the app bundle, here a file
            // in the seed folder (the name as given, or with `.json` added).
            let name = String(text[range.upperBound...])
            for candidate in [name, name + ".json"] where !name.isEmpty {
                let path = ((root as NSString).appendingPathComponent(candidate) as NSString).standardizingPath
                guard let resolved = Self.realPath(path) else { continue }
                guard isInsideRoot(path), isInsideRoot(resolved) else { throw fail(.outsideRoot, "seedUrl '\(text)' leads outside the seed folder") }
                return .file(resolved)
            }
            throw fail(.missingFile, "seedUrl '\(text)': no file '\(name)' or '\(name).json' in the seed folder (bundleResource links resolve there)")
        }
        guard scheme == "http" || scheme == "https" else {
            throw fail(.invalidSeed, "seedUrl '\(text)': only http, https, file and bundleResource URLs are supported")
        }
        if options.remoteLoader == nil {
            guard let host = url.host, options.allowedRemoteHosts.contains(host) else {
                throw fail(.remoteNotAllowed, "seedUrl '\(text)': remote loading is not enabled for host '\(url.host ?? "")' (allow it with allowedRemoteHosts / --allow-remote)")
            }
        }
        return .remote(url)
    }

    /// Reads one file, counting it against the limits.
    func read(_ source: SeedSource, place: (String, String?)) throws -> Data {
        let name = source.display(root: root)
        func fail(_ kind: DepotError.SeedProblem, _ detail: String) -> DepotError {
            DepotError.seedFailed(kind, file: name, jsonPath: nil, detail: detail)
        }
        if filesRead >= options.maxFiles { throw fail(.limitExceeded, "more than \(options.maxFiles) files in the seed tree (maxFiles)") }
        let data: Data
        switch source {
        case .file(let path):
            let attributes = try? FileManager.default.attributesOfItem(atPath: path)
            if (attributes?[.type] as? FileAttributeType) == .typeDirectory { throw fail(.unreadableFile, "is a folder, not a seed file") }
            if let size = attributes?[.size] as? Int, size > options.maxBytesPerFile {
                throw fail(.limitExceeded, "\(size) bytes exceed maxBytesPerFile (\(options.maxBytesPerFile))")
            }
            guard let d = FileManager.default.contents(atPath: path) else { throw fail(.unreadableFile, "cannot be read") }
            data = d
        case .remote(let url):
            if let loader = options.remoteLoader {
                do { data = try loader(url) } catch { throw fail(.remoteFailed, "loading failed: \(error)") }
            } else {
                data = try Self.fetch(url, limit: options.maxBytesPerFile, fail: fail)
            }
        }
        if data.count > options.maxBytesPerFile {
            throw fail(.limitExceeded, "\(data.count) bytes exceed maxBytesPerFile (\(options.maxBytesPerFile))")
        }
        bytesRead += data.count
        if bytesRead > options.maxTotalBytes {
            throw fail(.limitExceeded, "the seed tree exceeds maxTotalBytes (\(options.maxTotalBytes))")
        }
        filesRead += 1
        return data
    }

    /// A blocking HTTP GET with a time limit.
    static func fetch(_ url: URL, limit: Int, fail: (DepotError.SeedProblem, String) -> DepotError) throws -> Data {
        final class Box: @unchecked Sendable { var data: Data?; var error: Error?; var status = 0 }
        let box = Box()
        let done = DispatchSemaphore(value: 0)
        var request = URLRequest(url: url)
        request.timeoutInterval = 30
        let task = URLSession.shared.dataTask(with: request) { data, response, error in
            box.data = data
            box.error = error
            box.status = (response as? HTTPURLResponse)?.statusCode ?? 0
            done.signal()
        }
        task.resume()
        if done.wait(timeout: .now() + 60) == .timedOut {
            task.cancel()
            throw fail(.remoteFailed, "timed out")
        }
        if let error = box.error { throw fail(.remoteFailed, "\(error.localizedDescription)") }
        guard (200..<300).contains(box.status), let data = box.data else { throw fail(.remoteFailed, "HTTP status \(box.status)") }
        return data
    }
}
