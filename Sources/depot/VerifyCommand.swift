import ArgumentParser
import Depot
import DepotLMDB
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check a whole environment: meta pages, every page of every named database, every key and value inside the file, every document's checksum.",
        discussion: """
            LMDB trusts its files: a damaged page can crash the process reading it. So the checking runs in a child \
            process (this program again, with --child); a crash of the child is reported as \
            'the verifier crashed with signal N', and nothing else is harmed. Exit status: 0 when everything is \
            sound, 1 when something is damaged (each problem names its database and key, or the entry's position \
            when the node itself is damaged, e.g. a key or value running past the used part of the file), 64 for \
            usage errors. \
            Stored values are never printed. Records of an encrypted store (sealed by a record transform) are counted, \
            and their pages and envelopes checked, but without the key their checksums cannot be: they are reported as \
            encrypted and not checked, never as damaged. With the key (--key-file or DEPOT_KEY, in a depot built with \
            --traits Crypto) they are opened and checked like the others; a key that opens none of them is reported \
            as the wrong key, not as damage.
            """)

    @OptionGroup var location: PathOption
    @OptionGroup var key: KeyOption
    @OptionGroup var output: OutputOptions
    @Option(help: "List at most this many problems.") var maxProblems: Int = 100
    @Flag(help: .hidden) var child = false

    func validate() throws {
        guard maxProblems > 0 else { throw ValidationError("--max-problems must be at least 1, got \(maxProblems)") }
    }

    func run() throws {
        try reportingErrors {
            if child {
                try runChild()
            } else {
                try runParent()
            }
        }
    }

    private func runParent() throws {
        let path = location.path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw CLIFailure(code: "noEnvironment", message: "no environment at '\(path)' (no such folder)")
        }
        try refuseUnenterableFolder(path)
        do {
            try FileValidator.checkFileKinds(folder: path) // a FIFO has no size: never call it empty
        } catch {
            throw CLIFailure(code: "unreadable", message: "cannot open '\(path)': \(userMessage(for: error))")
        }
        let data = path + "/data.mdb"
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: data) else {
            throw CLIFailure(code: "noEnvironment", message: "no environment at '\(path)' (no data.mdb)")
        }
        if (attributes[.size] as? Int ?? 0) == 0 {
            throw CLIFailure(code: "emptyFile", message: "'\(data)' is empty (0 bytes): no data, not an LMDB environment")
        }
        // Where LMDB cannot register the child as a reader, a writer elsewhere can rewrite pages
        // under it: a crash then may not be damage (the meta pages tell whether it wrote).
        let unguarded = UnguardedReads.isOnReadOnlyFileSystem(path)
        let unguardedBefore = unguarded ? FileValidator.lastTransactionID(folder: path) : nil
        let process = Process()
        process.executableURL = Self.ownExecutable()
        process.arguments = ["verify", "--child", "--path", path, "--max-problems", "\(maxProblems)", "--key-id", "\(key.keyID)"]
            + (key.keyFile.map { ["--key-file", $0] } ?? []) + (output.json ? ["--json"] : [])
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFT_BACKTRACE"] = "enable=no" // a crash of the child is expected, not worth a backtrace
        process.environment = environment
        do {
            try process.run()
        } catch {
            throw CLIFailure(code: "childFailed", message: "cannot start the verifier child process: \(error)")
        }
        process.waitUntilExit()
        switch process.terminationReason {
        case .uncaughtSignal:
            let signal = process.terminationStatus
            let name = strsignal(signal).map { String(cString: $0) } ?? "signal"
            // Meta pages that cannot be read (before or after) count as changed, as in `UnguardedReads.changes()`.
            let after = unguarded ? FileValidator.lastTransactionID(folder: path) : nil
            if unguarded && (unguardedBefore == nil || after == nil || after != unguardedBefore) {
                throw CLIFailure(code: "changedWhileReading", message: "the verifier crashed with signal \(signal) (\(name)), which may not be damage: "
                                 + UnguardedReads.explanation((path, unguardedBefore, after)))
            }
            throw CLIFailure(code: "damaged", message: "the verifier crashed with signal \(signal) (\(name)) while reading '\(path)': the file is damaged in a way LMDB does not detect; restore it from a backup")
        case .exit:
            if process.terminationStatus != 0 { throw ExitCode(process.terminationStatus) }
        @unknown default:
            throw ExitCode(1)
        }
    }

    /// The path of this program, to run it again as the child.
    static func ownExecutable() -> URL {
        if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            return URL(fileURLWithPath: target)
        }
        return Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
    }

    private func runChild() throws {
        var noCore = rlimit(rlim_cur: 0, rlim_max: 0)
        _ = setrlimit(Int32(RLIMIT_CORE.rawValue), &noCore) // a crash here must not leave core files
        // A failed check of LMDB ends the child as its other crashes do (the parent reports the
        // signal), without LMDB's own line on standard error, which stays one JSON object.
        Environment.assertionHook = { _, _ in abort() }
        let env: Environment
        do {
            env = try openExisting(location.path)
        } catch let error as CLIFailure {
            throw error // already names the folder
        } catch {
            throw CLIFailure(code: "unreadable", message: "cannot open '\(location.path)': \(userMessage(for: error))")
        }
        var transform: (any RecordTransform)?
        if key.isGiven && !KeyOption.canDecrypt {
            OutputConvention.printWarning("a key was given, but this depot was built without the Crypto trait: encrypted records are counted, "
                                          + "not opened (build with 'swift build --traits Crypto')")
        } else {
            transform = try key.transform()
        }
        let report: VerificationReport
        do {
            report = try Verifier.verify(env, maxProblems: maxProblems, recordTransform: transform)
        } catch {
            throw CLIFailure(code: "unreadable", message: "cannot read '\(location.path)': \(userMessage(for: error))")
        }
        // Problems found while a writer elsewhere rewrote pages under this reader are not reported as damage.
        if !report.isClean { try UnguardedReads.confirmUnchanged() }
        if transform != nil && report.totalOpened == 0 && report.totalUnopened > 0 {
            throw CLIFailure(code: "transformFailed", message: "the key opens none of the \(report.totalUnopened) encrypted records of '\(env.path)': "
                             + "the wrong key (or --key-id), or a store not sealed with AESGCMTransform; nothing was checked beyond pages and envelopes")
        }
        if output.json {
            print(try JSONOutput.line(report))
        } else {
            for db in report.databases {
                print("\(db.name): \(db.entries) entries" + (db.documents > 0 ? ", \(db.documents) documents checked" : "")
                      + (db.sealed > 0 ? ", \(db.sealed) encrypted records not checked" : "")
                      + (db.opened > 0 ? " (\(db.opened) of them decrypted with the key)" : ""))
            }
            print("free list: \(report.freeListRecords) records")
            if report.isClean {
                print("ok: \(report.databases.count) databases, \(report.totalEntries) entries, \(report.totalDocuments) document checksums verified")
            }
            if report.totalSealed > 0 {
                print("\(report.totalSealed) encrypted records could not be checked without the key (their pages and envelopes were): not damaged, not verified; "
                      + "to check them, " + KeyOption.howToGive)
            }
            if report.totalOpened > 0 {
                print("\(report.totalOpened) encrypted records decrypted with the key and checked")
            }
        }
        if !report.isClean {
            if !output.json { // the report lists them
                for problem in report.problems { printError("damaged: \(problem)") }
                if report.truncated { printError("(more problems were found than --max-problems \(maxProblems) lists)") }
            }
            throw CLIFailure(code: "damaged", message: "\(report.problems.count)\(report.truncated ? "+" : "") problem(s) found in '\(env.path)'")
        }
    }
}
