import DepotTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A tiny HTTP/1.0 file server on 127.0.0.1 for seed tests: serves files of one folder, counts
/// requests, stops when released. Bounded: it serves at most `maxRequests` requests.
final class LoopbackHTTPServer: @unchecked Sendable {
    // @unchecked Sendable: `requests` is guarded by `lock`; the socket is closed once in `stop`.
    let port: UInt16
    private let socketFD: Int32
    private let folder: String
    private let lock = NSLock()
    private var requests = 0
    private var stopped = false

    init(serving folder: String, maxRequests: Int = 200) throws {
        self.folder = folder
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else { throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        socketFD = fd
        port = UInt16(bigEndian: address.sin_port)
        let thread = Thread { [self] in self.serve(maxRequests: maxRequests) }
        thread.start()
    }

    var requestCount: Int { lock.withLock { requests } }

    private func serve(maxRequests: Int) {
        for _ in 0..<maxRequests {
            let client = accept(socketFD, nil, nil)
            if client < 0 { return }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let n = read(client, &buffer, buffer.count)
            let request = String(decoding: buffer.prefix(max(0, n)), as: UTF8.self)
            let path = request.split(separator: " ").dropFirst().first.map(String.init) ?? "/"
            lock.withLock { requests += 1 }
            let file = folder + "/" + (path.removingPercentEncoding ?? path).split(separator: "/").joined(separator: "/")
            let response: Data
            if !path.contains(".."), let body = FileManager.default.contents(atPath: file) {
                response = Data("HTTP/1.0 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n".utf8) + body
            } else {
                response = Data("HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8)
            }
            response.withUnsafeBytes { _ = write(client, $0.baseAddress, $0.count) }
            close(client)
        }
    }

    func stop() {
        lock.withLock {
            if stopped { return }
            stopped = true
            shutdown(socketFD, Int32(SHUT_RDWR))
            close(socketFD)
        }
    }

    deinit { stop() }
}
