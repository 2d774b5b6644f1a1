import Foundation
import Testing
import DepotTestSupport

/// Errors an outside tester found unclear (2026-12-07): each names the file and the reason, and
/// carries a code.
@Suite("depot: errors that name what was wrong")
struct ErrorMessageCLITests {
    let folder = TemporaryFolder("depot-error-messages")

    func jsonError(_ text: String) -> [String: Any]? { jsonErrorObject(text) }

    /// `torture --start` past the 10-digit numbers of `--mode kv` was exit status 1 without a
    /// code; it is a usage error now. A store whose own last number leaves no room (no
    /// `--start`) fails with `numbersExhausted`.
    @Test func tortureNumbersPastTheirWidthAreAUsageError() throws {
        let store = folder.sub("torture")
        let past = try depot("torture", "--mode", "kv", "--path", store, "--start", "9223372036854775807", "--count", "2", "--json")
        #expect(past.status == 64 && jsonError(past.err)?["code"] as? String == "usage", "\(past)")
        let last = try depot("torture", "--mode", "kv", "--path", store, "--start", "9999999999", "--count", "1", "--json")
        #expect(last.status == 0, "\(last)")
        let resumed = try depot("torture", "--mode", "kv", "--path", store, "--count", "1", "--json")
        #expect(resumed.status == 1 && jsonError(resumed.err)?["code"] as? String == "numbersExhausted", "\(resumed)")
    }

    /// `put --no-overwrite` of a stored key said "the key already exists" without naming it, and
    /// `kv get`/`kv delete` of a missing key did not name the alias: both name them now (and
    /// never the value).
    @Test func refusedAndMissingKeysAreNamed() throws {
        let store = folder.sub("named-keys")
        #expect(try depot("put", "--path", store, "--db", "d", "k1", "secret-value").status == 0)
        let again = try depot("put", "--path", store, "--db", "d", "--no-overwrite", "k1", "other-value", "--json")
        #expect(again.status == 1, "\(again)")
        let refused = jsonError(again.err)
        let message = refused?["message"] as? String ?? ""
        #expect(refused?["code"] as? String == "keyExists" && message.contains("'k1'") && message.contains("'d'"), "\(again.err)")
        #expect(!again.err.contains("secret-value") && !again.err.contains("other-value"), "a value in a message: \(again.err)")
        #expect(try depot("get", "--path", store, "--db", "d", "k1").out == "secret-value\n", "the stored value was kept")
        #expect(try depot("kv", "set", "--path", store, "--alias", "prefs", "present", "1").status == 0)
        for command in ["get", "delete"] {
            let missing = try depot("kv", command, "--path", store, "--alias", "prefs", "absent", "--json")
            let error = jsonError(missing.err)
            let text = error?["message"] as? String ?? ""
            #expect(missing.status == 1 && error?["code"] as? String == "notFound" && text.contains("'absent'") && text.contains("'prefs'"),
                    "kv \(command): \(missing)")
        }
    }

    /// A `data.mdb` that is a symbolic link to a missing file: LMDB would create the link's
    /// target (wherever it points). Refused, naming the link; nothing is created.
    @Test func aDanglingDataFileLinkIsRefused() throws {
        let store = folder.sub("dangling"), elsewhere = folder.sub("elsewhere")
        try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: store + "/data.mdb", withDestinationPath: elsewhere + "/data.mdb")
        let put = try depot("put", "--path", store, "--db", "d", "k", "v", "--json")
        #expect(put.status == 1, "\(put)")
        let error = jsonError(put.err)
        #expect(error?["code"] as? String == "MDB_INVALID" && (error?["message"] as? String)?.contains("symbolic link") == true, "\(put.err)")
        #expect(!FileManager.default.fileExists(atPath: elsewhere + "/data.mdb"), "the link's target was created")
    }

    /// A lock file the process may not write: the error named only the folder ("operation not
    /// permitted"), or blamed lock.mdb in general words whatever the operation was. It names the
    /// file now. Root bypasses file modes: it makes the file immutable, where the file system can
    /// (not tmpfs or overlay: the test is skipped there).
    @Test(.enabled(if: geteuid() != 0 || Self.canMakeImmutable(), "root needs 'chattr +i', which this file system lacks"))
    func aLockFileThatCannotBeWrittenIsNamed() throws {
        let store = folder.sub("locked")
        #expect(try depot("put", "--path", store, "--db", "d", "k", "v").status == 0)
        let lock = store + "/lock.mdb"
        if geteuid() == 0 {
            let immutable = try runCommand(URL(fileURLWithPath: "/bin/sh"), ["-c", "chattr +i \"$0\"", lock])
            try #require(immutable.status == 0, "\(immutable)")
        } else {
            #expect(chmod(lock, 0o444) == 0)
        }
        defer {
            _ = try? runCommand(URL(fileURLWithPath: "/bin/sh"), ["-c", "chattr -i \"$0\" 2>/dev/null; chmod 644 \"$0\"", lock])
        }
        let get = try depot("get", "--path", store, "--db", "d", "k", "--json")
        #expect(get.status == 1, "\(get)")
        let message = jsonError(get.err)?["message"] as? String ?? ""
        #expect(message.contains("cannot open '\(lock)' for writing") && message.contains("even to read"), "\(get.err)")
    }

    /// Whether `chattr +i` works on a file in the temporary folder (root on ext4, xfs, btrfs).
    static func canMakeImmutable() -> Bool {
        let probe = NSTemporaryDirectory() + "depot-immutable-probe-\(getpid())"
        guard FileManager.default.createFile(atPath: probe, contents: Data()) else { return false }
        defer { try? FileManager.default.removeItem(atPath: probe) }
        let set = try? runCommand(URL(fileURLWithPath: "/bin/sh"), ["-c", "chattr +i \"$0\" && chattr -i \"$0\"", probe])
        return set?.status == 0
    }
}
