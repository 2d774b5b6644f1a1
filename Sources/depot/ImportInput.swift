import Foundation

/// Reads lines from a file handle in large chunks (any line length; `\n` or `\r\n`), as bytes:
/// checking them (UTF-8, JSON) is the caller's work, so nothing is repaired on the way.
final class LineReader {
    /// One line: its number (from 1), the offset of its first byte in the input, its bytes
    /// (without the line break).
    struct Line {
        var number: Int
        var offset: Int
        var bytes: ArraySlice<UInt8>
    }

    private let handle: FileHandle
    private var buffer: [UInt8] = []
    private var start = 0
    private var atEnd = false
    private var number = 0
    /// Bytes consumed so far.
    private(set) var bytesRead = 0

    init(_ handle: FileHandle) { self.handle = handle }

    /// The next line, or nil at the end.
    func next() throws -> Line? {
        while true {
            if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                var end = newline
                if end > start && buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
                return take(buffer[start..<end], consumed: newline + 1 - start)
            }
            if atEnd {
                guard start < buffer.count else { return nil }
                return take(buffer[start...], consumed: buffer.count - start)
            }
            buffer.removeFirst(start)
            start = 0
            let chunk = try handle.read(upToCount: 1 << 20) ?? Data()
            if chunk.isEmpty { atEnd = true } else { buffer.append(contentsOf: chunk) }
        }
    }

    private func take(_ bytes: ArraySlice<UInt8>, consumed: Int) -> Line {
        number += 1
        let line = Line(number: number, offset: bytesRead, bytes: bytes)
        bytesRead += consumed
        start += consumed
        return line
    }
}

extension LineReader.Line {
    /// Whether the line holds only spaces, tabs and carriage returns (skipped by import).
    var isBlank: Bool { bytes.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D || $0 == 0x0B || $0 == 0x0C } }

    /// The offset (from 0, within the line) of the first byte that is not part of well-formed
    /// UTF-8, or nil when the whole line is UTF-8.
    var firstInvalidUTF8Offset: Int? {
        if bytes.allSatisfy({ $0 < 0x80 }) { return nil }
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let scalar): offset += scalar.count
            case .emptyInput: return nil
            case .error: return offset
            }
        }
    }
}
