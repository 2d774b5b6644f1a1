import ArgumentParser
import Depot
import DepotLMDB
import Foundation
#if Postgres
import DepotPostgres
#endif

/// Runs `body`, turning thrown errors into a user-facing message on standard error and exit
/// status 1. With `--json` (``OutputConvention/json``), the error is one JSON object on standard
/// error instead, with the machine codes (`MDB_KEYEXIST`, `-30799`, DepotError codes).
///
/// A store read without a place in LMDB's reader table and written meanwhile (see
/// ``UnguardedReads``) turns an error into `changedWhileReading` and adds a warning to a success.
func reportingErrors<R>(json: Bool = OutputConvention.json, _ body: () throws -> R) throws -> R {
    let result: R
    do {
        result = try body()
    } catch {
        throw reported(UnguardedReads.settle(error) ?? error, json: json)
    }
    _ = UnguardedReads.settle(nil)
    return result
}

/// ``reportingErrors(json:_:)`` for an async body.
func reportingErrors<R>(json: Bool = OutputConvention.json, _ body: () async throws -> R) async throws -> R {
    let result: R
    do {
        result = try await body()
    } catch {
        throw reported(UnguardedReads.settle(error) ?? error, json: json)
    }
    _ = UnguardedReads.settle(nil)
    return result
}

/// Prints `error` for the user (as JSON with `json`) and returns exit status 1 to throw; an
/// `ExitCode` or `CleanExit` is returned as it is, unprinted.
private func reported(_ error: any Error, json: Bool) -> any Error {
    if error is ExitCode || error is CleanExit { return error }
    if json, let line = try? JSONOutput.line(["error": ErrorReport(error)]) {
        StandardError.write(line + "\n")
    } else {
        printError("error: \(userMessage(for: error))")
    }
    return ExitCode(1)
}

/// A failure of a command that commits in several transactions (`fill`): the error, and what
/// was committed before it. Reported as the error itself, with the note and `committed` added.
struct AfterCommits: Error, CustomStringConvertible {
    let underlying: any Error
    /// Records committed before the failure.
    let committed: Int
    let note: String

    init(_ underlying: any Error, committed: Int, note: String) {
        self.underlying = underlying
        self.committed = committed
        self.note = note
    }

    var description: String { userMessage(for: underlying) + "; " + note }
}

/// What `--json` prints for an error.
struct ErrorReport: Encodable {
    var message: String
    var code: String?
    var lmdbCode: Int32?
    var alias: String?
    var collection: String?
    var id: String?
    var fieldPath: String?
    /// Where bad input was (`import`): the file as named (`-`: standard input), its line,
    /// the byte offset in it (from 0) and the JSON path within the line.
    var file: String?
    var line: Int?
    var offset: Int?
    var jsonPath: String?
    /// Records committed before the failure, for a command that commits as it goes (`fill`).
    var committed: Int?
    /// The SQLSTATE of a PostgreSQL server's error.
    var sqlState: String?

    init(_ error: any Error) {
        // A storage failure is reported as the driver's error (LMDB's code and plain words).
        let error = storageUnderlying(error)
        message = userMessage(for: error)
        switch error {
        case let error as AfterCommits:
            self = ErrorReport(error.underlying)
            message = error.description
            committed = error.committed
        case let error as ImportError:
            if let underlying = error.underlying { self = ErrorReport(underlying) }
            message = userMessage(for: error)
            code = code ?? error.kind.rawValue
            file = error.file
            line = error.line
            offset = error.offset
            jsonPath = error.jsonPath
        case let error as LMDBError:
            code = LMDBErrorText.codeName(error)
            lmdbCode = error.code
        case let error as DepotError:
            // A seed failure by what was wrong (`malformedJSON`), its file and JSON path, as
            // `import` reports bad input.
            code = error.seedProblem?.rawValue ?? error.code.rawValue
            alias = error.alias
            collection = error.collection
            id = error.id
            file = error.file
            if error.code == .seedFailed { jsonPath = error.fieldPath } else { fieldPath = error.fieldPath }
        case let error as CLIFailure:
            code = error.code
            file = error.file
            jsonPath = error.jsonPath
        case let error as CocoaError where error.isFileError:
            code = FileErrorText.code(error)
            file = FileErrorText.path(error)
        #if Postgres
        case let error as PostgresDriverError:
            code = PostgresErrorText.code(error)
            sqlState = error.sqlState
        #endif
        default:
            break
        }
    }
}

/// The message users see: LMDB's jargon (`MDB_KEYEXIST: Key/data pair already exists`)
/// replaced by what it means for them.
func userMessage(for error: any Error) -> String {
    if let error = storageUnderlying(error) as? LMDBError { return LMDBErrorText.message(error) }
    if let error = error as? CocoaError, error.isFileError { return FileErrorText.message(error) }
    if let error = error as? AfterCommits { return error.description }
    // A sealed store written without the key: the CLI's way to give it.
    if let error = error as? DepotError, error.code == .transformRequired, error.collection == nil {
        return "the store is encrypted (its records are sealed): " + (KeyOption.canDecrypt ? KeyOption.howToGive
            : "writing it needs a depot built with 'swift build --traits Crypto', then " + KeyOption.howToGive)
    }
    return "\(error)"
}

/// A Foundation file error (`CocoaError.isFileError`, from `FileManager` or `Data(contentsOf:)`) in plain
/// words, as LMDB's are: the file and the system's reason, not `Error Domain=NSCocoaErrorDomain …`.
enum FileErrorText {
    /// The file the error names, if any.
    static func path(_ error: CocoaError) -> String? {
        error.userInfo[NSFilePathErrorKey] as? String ?? error.url?.path
    }

    /// The system's error number behind it, if any.
    static func posixCode(_ error: CocoaError) -> Int32? {
        if let posix = error.underlying as? POSIXError { return posix.code.rawValue }
        guard let underlying = error.underlying.map({ $0 as NSError }), underlying.domain == NSPOSIXErrorDomain else { return nil }
        return Int32(truncatingIfNeeded: underlying.code)
    }

    /// `errno N` (as LMDB's system errors), else `fileError`.
    static func code(_ error: CocoaError) -> String {
        posixCode(error).map { "errno \($0)" } ?? "fileError"
    }

    static func message(_ error: CocoaError) -> String {
        let reason = posixCode(error).map { String(cString: strerror($0)).lowercased() } ?? error.localizedDescription
        // Foundation numbers its read errors from 256 and its write errors from 512.
        let verb = switch error.code.rawValue { case 256..<512: "read"; case 512..<768: "write"; default: "use" }
        return path(error).map { "cannot \(verb) '\($0)': \(reason)" } ?? reason
    }
}

/// The driver's error inside a `DepotError` with code `storage`; any other error as it is.
func storageUnderlying(_ error: any Error) -> any Error {
    if let error = error as? DepotError, error.code == .storage, let underlying = error.underlyingError { return underlying }
    return error
}

/// Plain-language texts for LMDB's codes.
enum LMDBErrorText {
    /// `MDB_KEYEXIST`, or the `errno` name's text for system errors.
    static func codeName(_ error: LMDBError) -> String {
        let raw = error.lmdbMessage
        if raw.hasPrefix("MDB_"), let colon = raw.firstIndex(of: ":") { return String(raw[..<colon]) }
        return "errno \(error.code)"
    }

    static func explanation(_ error: LMDBError) -> String {
        switch error {
        case LMDBError.keyExists: return "the key already exists (and overwriting was not allowed)"
        case LMDBError.notFound: return "not found"
        case LMDBError.badValueSize: return "the key or value has a size LMDB does not accept (keys: 1 to \(Environment.standardMaxKeySize) bytes)"
        case LMDBError.mapFull: return "the store reached its maximum size"
        case LMDBError.databasesFull: return "too many named databases for this environment"
        case LMDBError.readersFull: return "too many readers at once (raise maxReaders or close old readers)"
        case LMDBError.transactionFull: return "the transaction is too large; write in smaller batches"
        case LMDBError.corrupted, LMDBError.pageNotFound, LMDBError.panic:
            return "the data file is damaged; run 'depot verify' and restore from a backup"
        case LMDBError.invalid: return "the store's data file or lock file is not an LMDB file"
        case LMDBError.versionMismatch: return "the data file was written by an incompatible LMDB version"
        case LMDBError.incompatible: return "the database was opened with incompatible options"
        case LMDBError.permissionDenied:
            // The driver's detail names the file refused and why (`FileValidator.refusedFile`).
            return "permission denied"
        case LMDBError.noSpace: return "no space left on the device"
        case LMDBError.busy: return "the store is busy (another process holds it)"
        case LMDBError.wouldBlock: return "a resource was temporarily unavailable (EAGAIN: memory, a lock or another process holding the store); try again"
        default:
            let raw = error.lmdbMessage
            if raw.hasPrefix("MDB_"), let colon = raw.firstIndex(of: ":") {
                return raw[raw.index(after: colon)...].trimmingCharacters(in: .whitespaces).lowercased()
            }
            return raw.lowercased()
        }
    }

    static func message(_ error: LMDBError) -> String {
        var parts: [String] = []
        if let operation = error.operation {
            parts.append(operation.hasPrefix("mdb_") ? String(operation.dropFirst(4)).replacingOccurrences(of: "_", with: " ") : operation)
        }
        if let database = error.database { parts.append("database '\(database)'") }
        var text = parts.isEmpty ? "" : parts.joined(separator: " on ") + ": "
        text += explanation(error)
        if let detail = error.detail { text += " (\(detail))" }
        return text
    }
}

#if Postgres
/// Machine codes for the PostgreSQL driver's errors (as LMDB's and Depot's have theirs).
enum PostgresErrorText {
    /// The error's case: `connectionUnavailable`, `noStore`, …; `postgresError` for an error the
    /// server reported (its SQLSTATE is in `sqlState`).
    static func code(_ error: PostgresDriverError) -> String {
        switch error {
        case .invalidConfiguration: return "invalidConfiguration"
        case .invalidSchemaName: return "invalidSchemaName"
        case .connectionUnavailable: return "connectionUnavailable"
        case .server: return "postgresError"
        case .connectionLost: return "connectionLost"
        case .tlsFailure: return "tlsFailure"
        case .deadlineExceeded: return "deadlineExceeded"
        case .commitOutcomeUnknown: return "commitOutcomeUnknown"
        case .retriesExhausted: return "retriesExhausted"
        case .transactionEnded: return "transactionEnded"
        case .readOnlyTransaction: return "readOnlyTransaction"
        case .nestedWrite: return "nestedWrite"
        case .calledFromDriverThread: return "calledFromDriverThread"
        case .closed: return "closed"
        case .noStore: return "noStore"
        }
    }
}
#endif
