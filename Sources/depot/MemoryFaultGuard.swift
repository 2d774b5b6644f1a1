#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import DepotLMDB

/// Turns a memory fault (SIGSEGV, SIGBUS) or a failed check (SIGABRT, SIGILL, SIGTRAP, SIGFPE)
/// into a plain error message and exit status 1.
///
/// LMDB trusts its file: a damaged page can point past the end of `data.mdb`, a file truncated by
/// another program while it is mapped raises SIGBUS on the next read, and a page of the wrong kind
/// fails one of LMDB's assertions (reported through LMDB's assertion hook, `reportLMDBAssertion`).
/// `depot verify` checks for these in a child process; every other command would otherwise die
/// with a signal and a crash dump. The handler only writes a fixed message (async-signal-safe: no allocation, no
/// locks) and ends the process with `_exit`: nothing is committed, since a transaction that has
/// not returned from its commit is not durable, and LMDB's meta pages keep the last commit intact.
enum MemoryFaultGuard {
    /// Installs the handler for the process, with an alternate stack for the main thread (so that a
    /// stack overflow there is reported too; one on another thread still ends with the signal).
    static func install() {
        // Read now, outside the handler (which may only write a fixed message).
        memoryFaultJSON = OutputConvention.json
        memoryFaultUnguarded = false
        if let stack = alternateSignalStack {
            var alternate = stack_t()
            alternate.ss_sp = stack
            alternate.ss_size = alternateSignalStackSize
            alternate.ss_flags = 0
            _ = sigaltstack(&alternate, nil)
        }
        // LMDB prints a failed assertion before it aborts: reported here instead, as the one
        // error of the run (JSON with --json), so that standard error stays one JSON object.
        Environment.assertionHook = reportLMDBAssertion
        for signal in [SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGTRAP, SIGFPE] {
            var action = sigaction()
            #if canImport(Glibc)
            action.__sigaction_handler.sa_handler = reportMemoryFault
            #else
            action.__sigaction_u.__sa_handler = reportMemoryFault
            #endif
            action.sa_flags = Int32(truncatingIfNeeded: Int(SA_ONSTACK) | Int(SA_RESETHAND)) // SA_RESETHAND is 0x8000_0000 on Linux
            sigemptyset(&action.sa_mask)
            _ = sigaction(signal, &action, nil)
        }
    }
}

/// The main thread's stack for signal handlers, kept for the life of the process (held here so
/// that leak checkers see it as reachable). Set once, before any handler can run.
private let alternateSignalStackSize = 1 << 16
nonisolated(unsafe) private let alternateSignalStack: UnsafeMutableRawPointer? = malloc(alternateSignalStackSize)

/// Whether a store is read without a place in LMDB's reader table (``UnguardedReads``): a fault
/// may then come from a writer elsewhere reusing pages, which the handler's message says. Set
/// before the read it is about begins (and first in ``MemoryFaultGuard/install()``, so that the
/// handler never runs the global's lazy initialization); a word-sized store the handler reads.
nonisolated(unsafe) var memoryFaultUnguarded = false

/// Whether the run asked for JSON (`--json`): the handler then writes its message as the one
/// JSON object of an error, `{"error": {"code": "storeDamaged" or "internalCheck", "message": …}}`.
/// Set once by ``MemoryFaultGuard/install()``, before any handler can run.
nonisolated(unsafe) private var memoryFaultJSON = false

/// The signal handler: one `write` of a fixed message (after the opening of a JSON error object
/// with `--json`, and before its closing), then `_exit(1)`.
private func reportMemoryFault(_ signal: Int32) {
    if memoryFaultJSON {
        let opening: StaticString = signal == SIGBUS || signal == SIGSEGV || signal == SIGABRT
            ? "{\"error\":{\"code\":\"storeDamaged\",\"message\":\""
            : "{\"error\":{\"code\":\"internalCheck\",\"message\":\""
        _ = write(2, opening.utf8Start, opening.utf8CodeUnitCount)
    }
    let message: StaticString
    switch signal {
    case SIGBUS:
        message = "error: depot stopped on a bus error (SIGBUS) while reading the store: a file of the store is shorter than LMDB expects (data.mdb or lock.mdb truncated, or damaged so that a page points past its end); a write in progress is committed only if its commit had finished (read back what it wrote). Run 'depot verify --path DIR' and restore from a backup if it reports problems.\n"
    case SIGSEGV:
        message = "error: depot stopped on a memory fault (SIGSEGV) while reading the store: its data file is most likely damaged (a page pointing outside the file); a write in progress is committed only if its commit had finished (read back what it wrote). Run 'depot verify --path DIR' and restore from a backup if it reports problems.\n"
    case SIGABRT:
        message = "error: depot stopped on an abort (SIGABRT; the message is above): a write in progress is committed only if its commit had finished (read back what it wrote). If the store's data file may be damaged, run 'depot verify --path DIR' and restore from a backup if it reports problems.\n"
    default:
        message = "error: depot stopped on a failed internal check (the message is above); a write in progress is committed only if its commit had finished (read back what it wrote). If the store's data file may be damaged, run 'depot verify --path DIR' and restore from a backup if it reports problems.\n"
    }
    let unguarded: StaticString = " The store is on a read-only file system, where LMDB keeps no reader table: if a process writes it elsewhere, this may not be damage; read a copy (depot backup)."
    let note = memoryFaultUnguarded ? unguarded.utf8CodeUnitCount : 0
    if memoryFaultJSON {
        // The message without its "error: " and its newline (no character of it needs escaping).
        let prefix = 7
        _ = write(2, message.utf8Start + prefix, message.utf8CodeUnitCount - prefix - 1)
        _ = write(2, unguarded.utf8Start, note)
        let closing: StaticString = "\"}}\n"
        _ = write(2, closing.utf8Start, closing.utf8CodeUnitCount)
    } else {
        _ = write(2, message.utf8Start, message.utf8CodeUnitCount - 1)
        _ = write(2, unguarded.utf8Start, note)
        let newline: StaticString = "\n"
        _ = write(2, newline.utf8Start, 1)
    }
    _exit(1)
}

/// LMDB's assertion hook (see `Environment.assertionHook`): called on the thread whose check
/// failed, not in a signal handler, before LMDB would print the assertion and abort. Writes the
/// error with the assertion's text (LMDB's file, line and expression: never stored data), then
/// `_exit(1)`, as the signal handler does: nothing in progress is committed.
private func reportLMDBAssertion(_ env: OpaquePointer?, _ text: UnsafePointer<CChar>?) {
    let assertion = text.map { String(cString: $0) } ?? "an assertion"
    if let change = UnguardedReads.changes().first {
        OutputConvention.printFailure("a failed check of LMDB (\(assertion)) stopped depot, which may not be damage: " + UnguardedReads.explanation(change),
                                      code: "changedWhileReading")
        _exit(1)
    }
    OutputConvention.printFailure("a failed check of LMDB (\(assertion)) stopped depot while reading the store: its data file is most likely damaged (a page of the wrong kind); a write in progress is committed only if its commit had finished (read back what it wrote). Run 'depot verify --path DIR' and restore from a backup if it reports problems.", code: "storeDamaged")
    _exit(1)
}
