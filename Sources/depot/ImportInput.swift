import Depot
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The input of `depot import`, checked before the store is touched.
enum ImportInput {
    /// Opens `file` (`-`: standard input) for reading: it must exist, be readable, and be a
    /// regular file or a pipe (`<(…)`). Returns the descriptor and, for a regular file, its size.
    /// - Throws: ``ImportError`` (`unreadableFile`) naming the file.
    static func open(_ file: String) throws -> (descriptor: Int32, size: Int?) {
        guard file != "-" else { return (STDIN_FILENO, nil) }
        func failure(_ detail: String) -> ImportError { ImportError(.unreadableFile, file: file, detail: detail) }
        let descriptor = systemOpen(file, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            switch code {
            case ENOENT: throw failure("does not exist")
            case EACCES: throw failure("cannot be read (permission denied)")
            default: throw failure("cannot be opened (\(errorText(code)))")
            }
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let code = errno
            _ = close(descriptor)
            throw failure("cannot be read (\(errorText(code)))")
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return (descriptor, Int(info.st_size))
        case S_IFIFO, S_IFCHR: return (descriptor, nil) // pipes, and devices such as /dev/null or a terminal
        case S_IFDIR:
            _ = close(descriptor)
            throw failure("is a folder, not a file")
        default:
            _ = close(descriptor)
            throw failure("is not a file, a pipe or a device that can be read")
        }
    }

    /// `open(2)` (the name `open` is this enum's).
    private static func systemOpen(_ path: String, _ flags: Int32) -> Int32 {
        #if canImport(Glibc)
        Glibc.open(path, flags)
        #else
        Darwin.open(path, flags)
        #endif
    }

    /// The system's text for an `errno` value.
    static func errorText(_ code: Int32) -> String {
        strerror(code).map { String(cString: $0) } ?? "errno \(code)"
    }
}

/// Reads lines from a file descriptor in large chunks (any line length; `\n` or `\r\n`), as
/// bytes: checking them (UTF-8, JSON) is the caller's work, so nothing is repaired on the way.
final class LineReader {
    /// One line: its number (from 1), the offset of its first byte in the input, its bytes
    /// (without the line break).
    struct Line {
        var number: Int
        var offset: Int
        var bytes: ArraySlice<UInt8>
    }

    private let descriptor: Int32
    private var buffer: [UInt8] = []
    private var start = 0
    /// Where the search for the next newline resumes: the bytes between `start` and here hold
    /// none (a long line is scanned once, not again after every read).
    private var searched = 0
    private var atEnd = false
    private var number = 0
    /// Bytes consumed so far.
    private(set) var bytesRead = 0

    /// The longest line read (in bytes, without its line break): a longer one is refused
    /// before it fills memory (an input without line breaks, such as `/dev/zero`).
    let longestLine: Int

    init(_ descriptor: Int32, longestLine: Int = GeneratorLimits.maxValueSize) {
        self.descriptor = descriptor
        self.longestLine = longestLine
    }

    /// The next line, or nil at the end.
    func next() throws -> Line? {
        while true {
            if let newline = buffer[max(start, searched)...].firstIndex(of: UInt8(ascii: "\n")) {
                var end = newline
                if end > start && buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
                try checkLength(end - start)
                return take(buffer[start..<end], consumed: newline + 1 - start)
            }
            if atEnd {
                guard start < buffer.count else { return nil }
                try checkLength(buffer.count - start)
                return take(buffer[start...], consumed: buffer.count - start)
            }
            searched = buffer.count - start
            // (One byte more than the limit may be a line's `\r`, its `\n` still to come: the
            // line itself is checked when it is complete.)
            if searched > longestLine + 1 {
                throw ImportError(.invalidLine, line: number + 1, offset: bytesRead,
                                  detail: "the line is longer than \(longestLine) bytes (--max-line-size); nothing after it was read")
            }
            buffer.removeFirst(start)
            start = 0
            try fill()
        }
    }

    /// Refuses the next line when it is `length` bytes, more than ``longestLine`` (every line,
    /// however the input arrives: a short line read whole in one chunk as well as a long one).
    private func checkLength(_ length: Int) throws {
        guard length > longestLine else { return }
        throw ImportError(.invalidLine, line: number + 1, offset: bytesRead,
                          detail: "the line is \(length) bytes, longer than \(longestLine) (--max-line-size)")
    }

    /// Where `read(2)` puts its bytes: allocated once (a pipe returns 64 KiB a read, so
    /// growing and zero-filling `buffer` by 1 MiB per read cost more than the import).
    private var chunk = [UInt8](repeating: 0, count: 1 << 20)

    /// Appends up to 1 MiB read from the descriptor; sets `atEnd` at the end of the input.
    private func fill() throws {
        let pending = buffer.count - start
        var got: Int
        repeat {
            got = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        } while got < 0 && errno == EINTR
        if got < 0 {
            let code = errno
            throw ImportError(.unreadableFile, offset: bytesRead + pending,
                              detail: "could not be read after \(bytesRead + pending) bytes (\(ImportInput.errorText(code)))")
        }
        if got == 0 { atEnd = true }
        buffer.append(contentsOf: chunk[..<got])
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
    /// Whether the line holds only ASCII white space (skipped by import).
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

/// One parsed input line.
struct ImportedLine {
    var line: Int
    var collection: String
    var id: DocumentValue
    var document: DocumentValue
    /// The collection's ID kind as the line names it (`"idKind"`, which export writes where the
    /// ID's JSON alone would be read as another kind), else nil.
    var declaredKind: IDKind?
    /// The document's sync status as the line names it (`"syncStatus"`, which export writes
    /// where it is not `notSynced`); `notSynced` when it names none.
    var syncStatus = SyncStatus.notSynced

    /// Parses one line; `style` says whether `{"$date": …}` and its kin are typed values.
    init(parsing input: LineReader.Line, style: JSONStyle = .extended) throws {
        let number = input.number
        line = number
        if let bad = input.firstInvalidUTF8Offset {
            throw ImportError(.invalidUTF8, line: number, offset: input.offset + bad,
                              detail: "not valid UTF-8 at byte \(bad) of the line (byte \(input.offset + bad) of the input; bytes count from 0)")
        }
        let value: DocumentValue
        do {
            value = try DocumentValue(exportedLine: Data(input.bytes), style: style)
        } catch let error as BinaryCodecError {
            switch error {
            case .nestingTooDeep(let limit):
                throw ImportError(.nestingTooDeep, line: number, detail: "values are nested deeper than a stored document may be (\(limit) levels, not counting the line's own object)")
            case .invalidJSON(let offset, _):
                throw ImportError(.invalidJSON, line: number, offset: input.offset + offset, detail: "not valid JSON (\(error))", underlying: error)
            case .rejectedJSON(let offset, let path, _):
                throw ImportError(.invalidJSON, line: number, offset: input.offset + offset, jsonPath: path, detail: "not valid JSON (\(error))", underlying: error)
            default:
                throw ImportError(.invalidJSON, line: number, detail: "not valid JSON (\(error))", underlying: error)
            }
        } catch {
            throw ImportError(.invalidJSON, line: number, detail: "not valid JSON (\(error))", underlying: error)
        }
        guard case .object = value else {
            throw ImportError(.invalidLine, line: number, jsonPath: "$", detail: "expected {\"collection\": C, \"id\": ID, \"document\": {…}}, found \(Self.jsonKind(value))")
        }
        // A key the format does not have (a misspelling, an option of another tool) is refused,
        // never dropped without a word.
        if case .object(let members) = value, let unknown = members.first(where: { !Self.lineKeys.contains($0.key) }) {
            throw ImportError(.invalidLine, line: number, jsonPath: JSONParser.describe([.key(unknown.key)]),
                              detail: "unknown key: a line has only \"collection\", \"id\", \"document\" and the optional \"idKind\" and \"syncStatus\"")
        }
        guard case .string(let collection)? = value["collection"] else {
            throw ImportError(.invalidLine, line: number, jsonPath: "$.collection", detail: "expected {\"collection\": C, \"id\": ID, \"document\": {…}}: \"collection\" must be a string")
        }
        // Checked here so that the error names this line (storing names only its batch).
        do { try Store.validateCollectionName(collection) } catch let error as DepotError {
            throw ImportError(.invalidCollectionName, line: number, jsonPath: "$.collection", detail: error.message)
        }
        guard let id = value["id"], DocumentTransaction.inferredIDKind(id: id, document: .object([])) != nil else {
            throw ImportError(.invalidLine, line: number, jsonPath: "$.id", detail: "\"id\" must be a string, an integer or a UUID")
        }
        if let declared = value["idKind"] {
            guard case .string(let name) = declared, let kind = IDKind(rawValue: name) else {
                throw ImportError(.invalidLine, line: number, jsonPath: "$.idKind",
                                  detail: "\"idKind\" must be one of \"string\", \"signed\", \"unsigned\", \"uuid\" or \"content\"")
            }
            // A content hash is written one way only (64 lower-case hex digits, as export writes it).
            let spelledAsExported = kind != .content || DocumentTransaction.inferredIDKind(id: id, document: .object([])) == .content
            guard kind.key(for: id) != nil, spelledAsExported else {
                throw ImportError(.invalidLine, line: number, jsonPath: "$.id", detail: "the line's \"id\" is not a \(kind.rawValue) ID, as its \"idKind\" says")
            }
            declaredKind = kind
        }
        if let status = value["syncStatus"] {
            guard case .string(let name) = status, let parsed = SyncStatus(name: name) else {
                throw ImportError(.invalidLine, line: number, jsonPath: "$.syncStatus",
                                  detail: "\"syncStatus\" must be one of \"notSynced\", \"synced\", \"syncing\" or \"undetermined\"")
            }
            syncStatus = parsed
        }
        guard let document = value["document"], case .object(let fields) = document else {
            throw ImportError(.invalidLine, line: number, jsonPath: "$.document", detail: "\"document\" must be a JSON object")
        }
        // A document that names its own ID names the line's (as `doc put` requires of --id).
        // One UUID spelled in two cases is one ID only in a UUID collection: checked when the
        // collection's kind is known (`checkUUIDSpelling(kind:)`).
        let identifying = DynamicObject(entity: collection, fields: fields.map { ($0.key, $0.value) })
        if let own = identifying.id, !DocumentIDRules.same(id, own) {
            guard DocumentIDRules.sameUUID(id, own) else { throw Self.differentIDs(line: number, field: identifying.idField) }
            uuidSpellingField = identifying.idField
        }
        self.collection = collection
        self.id = id
        self.document = document
    }

    /// The document's ID field when it spells the line's UUID in another case (nil otherwise).
    var uuidSpellingField: String?

    /// Throws unless a document spelling the line's UUID in another case is in a UUID collection.
    func checkUUIDSpelling(kind: IDKind) throws {
        if let field = uuidSpellingField, kind != .uuid { throw Self.differentIDs(line: line, field: field) }
    }

    static func differentIDs(line: Int, field: String) -> ImportError {
        ImportError(.invalidLine, line: line, jsonPath: JSONParser.member("$.document", field),
                    detail: "the document's '\(field)' differs from the line's \"id\"; give the same ID in both")
    }

    /// The keys of a line: `{"collection": C, "id": ID, "document": {…}}`, and `"idKind"` and
    /// `"syncStatus"` where export names the collection's ID kind and the document's status.
    static let lineKeys: Set<String> = ["collection", "id", "idKind", "syncStatus", "document"]

    /// What a line that is not an object holds, in words (`an array`, `a number`).
    static func jsonKind(_ value: DocumentValue) -> String {
        switch value {
        case .null: return "null"
        case .bool: return "a boolean"
        case .int, .uint, .double: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        default: return "a value that is not an object"
        }
    }
}

/// Why an import failed, where (file, line, byte offset, JSON path), and what stayed stored.
/// Messages never contain input or stored values.
struct ImportError: Error, CustomStringConvertible {
    enum Kind: String {
        /// The input is missing, a folder, or could not be read.
        case unreadableFile
        case invalidUTF8
        case invalidJSON
        /// Nested deeper than a stored document may be.
        case nestingTooDeep
        /// Well-formed JSON, but not `{"collection": C, "id": ID, "document": {…}}`.
        case invalidLine
        /// A line's collection name is not one a store accepts (the store's own code).
        case invalidCollectionName
        /// The store refused a line's document (e.g. an ID of another kind than the collection's).
        case rejectedDocument
        /// Storing failed (e.g. the store is full).
        case storeFailed
    }

    var kind: Kind
    /// The input as named on the command line (`-`: standard input); set by the command.
    /// `unreadableFile` details read after it ("does not exist").
    var file: String?
    var line: Int?
    /// Byte offset in the input (from 0).
    var offset: Int?
    var jsonPath: String?
    var detail: String
    /// What the failure left stored ("nothing was stored").
    var outcome: String?
    var underlying: (any Error)?

    init(_ kind: Kind, file: String? = nil, line: Int? = nil, offset: Int? = nil, jsonPath: String? = nil, detail: String, underlying: (any Error)? = nil) {
        self.kind = kind
        self.file = file
        self.line = line
        self.offset = offset
        self.jsonPath = jsonPath
        self.detail = detail
        self.underlying = underlying
    }

    var description: String {
        let source = file.map { $0 == "-" ? "standard input" : "'\($0)'" } ?? "the input"
        var text = detail
        if let line {
            text = "\(source) line \(line)\(jsonPath.map { " at \($0)" } ?? ""): \(detail)"
        } else if kind == .unreadableFile {
            text = "\(source) \(detail)" // "'f' does not exist"
        }
        if let outcome { text += "; " + outcome }
        return text
    }
}
