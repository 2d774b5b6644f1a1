import Foundation
import Testing
import DepotTestSupport

/// Misuse of the raw key/value commands is a usage error (exit 64) that names the argument.
@Suite("depot CLI argument checks")
struct CLIArgumentTests {
    let folder = TemporaryFolder("depot-cli-args")
    var dir: String { folder.sub("env") }

    /// Runs `depot` through the shell, so that an argument can hold bytes that are not UTF-8.
    func depotShell(_ script: String) throws -> (status: Int32, out: String, err: String) {
        let exe = try #require(depotExecutable(), "the depot executable must be built")
        return try runProcess(URL(fileURLWithPath: "/bin/sh"), ["-c", script, exe.path, dir])
    }

    @Test func argumentsThatAreNotUTF8AreRefusedNotRepaired() throws {
        #expect(try depot("put", "--path", dir, "--db", "a", "k\u{FFFD}", "v").status == 0)
        let bad = try depotShell(#""$0" put --path "$1" --db a "$(printf 'k\377')" other"#)
        #expect(bad.status == 64)
        #expect(bad.err.contains("argument 6 is not valid UTF-8"))
        let read = try depotShell(#""$0" get --path "$1" --db a "$(printf 'k\376')""#)
        #expect(read.status == 64, "a different invalid key must not find the repaired one")
        #expect(try depot("get", "--path", dir, "--db", "a", "k\u{FFFD}").out == "v\n", "the stored value is unchanged")
    }

    @Test func rawWritesStayOutOfTheDocumentStoresOwnDatabases() throws {
        #expect(try depot("put", "--path", dir, "--db", "a", "k", "v").status == 0)
        for args in [["put", "--path", dir, "--db", "depot.meta", "k", "v"],
                     ["delete", "--path", dir, "--db", "depot.meta", "collection/default/people"],
                     ["fill", "--path", dir, "--db", "depot.doc/default/people", "--count", "3"]] {
            let run = try runProcess(try #require(depotExecutable()), args)
            #expect(run.status == 64, "\(args[0])")
            #expect(run.err.contains("one of the document store's own databases"), "\(args[0])")
        }
        let names = try depot("stat", "--path", dir, "--json").out
        #expect(!names.contains("depot.meta") && !names.contains("depot.doc"), "nothing was created")
    }

    @Test func emptyAndOversizedKeysAndNamesAreUsageErrors() throws {
        let long = String(repeating: "x", count: 512)
        for args in [["put", "--path", dir, "--db", "a", "", "v"], ["put", "--path", dir, "--db", "", "k", "v"],
                     ["get", "--path", dir, "--db", "a", long], ["delete", "--path", dir, "--db", "a", ""],
                     ["list", "--path", dir, "--db", ""]] {
            let run = try runProcess(try #require(depotExecutable()), args)
            #expect(run.status == 64, "\(args)")
        }
        #expect(try depot("put", "--path", dir, "--db", "a", long, "v").err.contains("512 bytes of UTF-8; keys hold at most 511"))
        #expect(try depot("put", "--path", dir, "--db", "a", String(long.dropLast()), "v").status == 0)
    }

    @Test func listLinesAreUnambiguous() throws {
        #expect(try depot("put", "--path", dir, "--db", "t", "a\tb", "c\nd\\e").status == 0)
        #expect(try depot("put", "--path", dir, "--db", "t", "a", "b\tc\nd").status == 0)
        let list = try depot("list", "--path", dir, "--db", "t")
        #expect(list.out == "a\tb\\tc\\nd\na\\tb\tc\\nd\\\\e\n")
    }

    @Test func mistakenSortDirectionsAndEndlessWaitsAreUsageErrors() throws {
        let sort = try depot("query", "--path", dir, "--collection", "c", "--sort", "name:up")
        #expect(sort.status == 64)
        #expect(sort.err.contains("must be asc or desc"))
        #expect(try depot("query", "--path", dir, "--collection", "c", "--sort", ":desc").status == 64)
        #expect(try depot("hold-reader", "--path", dir, "--seconds", "inf").status == 64)
    }

    @Test func documentCommandsNameEmptyAndMistakenArguments() throws {
        for args in [["doc", "put", "--path", dir, "--collection", "c", "--id", "", "{}"],
                     ["doc", "get", "--path", dir, "--collection", "", "--id", "1"],
                     ["doc", "delete", "--path", dir, "--alias", "", "--collection", "c", "--id", "1"],
                     ["query", "--path", dir, "--collection", ""]] {
            let run = try runProcess(try #require(depotExecutable()), args)
            #expect(run.status == 64, "\(args)")
            #expect(run.err.contains("must not be empty"), "\(args)")
        }
        let reference = try depot("doc", "put", "--path", dir, "--collection", "c", #"{"$ref": {"collection": "a", "id": "b"}}"#)
        #expect(reference.status == 1)
        #expect(reference.err.contains("the document is a reference"))
    }

    @Test func jsonErrorsAreJSONWhenTheStoreIsMissing() throws {
        for command in ["stat", "collections"] {
            let run = try depot(command, "--path", folder.sub("nowhere"), "--json")
            #expect(run.status == 1)
            let object = try JSONSerialization.jsonObject(with: Data(run.err.utf8)) as? [String: Any]
            let error = object?["error"] as? [String: Any]
            #expect(error?["code"] as? String == "noEnvironment", "\(command): \(run.err)")
        }
        #expect(try depot("put", "--path", dir, "--db", "a", "k", "v").status == 0)
        let noAlias = try depot("collections", "--path", dir, "--alias", "zz", "--json")
        #expect(noAlias.err.hasPrefix(#"{"error":{"code":"noAlias""#), "\(noAlias.err)")
    }

    /// Root reads any folder, so as root the tool runs as `nobody` (through `setpriv`), which
    /// needs every folder above the temporary folder to let others pass.
    static let canDropPrivileges = getuid() != 0 || (which("setpriv") != nil && othersCanReach(NSTemporaryDirectory()))

    static func othersCanReach(_ path: String) -> Bool {
        var current = URL(fileURLWithPath: path).standardizedFileURL.path
        while true {
            var info = stat()
            guard stat(current, &info) == 0, info.st_mode & 0o001 != 0 else { return false }
            let parent = (current as NSString).deletingLastPathComponent
            if parent == current || parent.isEmpty { return true }
            current = parent
        }
    }

    @Test(.enabled(if: canDropPrivileges)) func anUnreadableStoreFolderIsNamedAsSuch() throws {
        let exe = try #require(depotExecutable())
        #expect(try depot("put", "--path", dir, "--db", "a", "k", "v").status == 0)
        for arguments in [["get", "--path", dir, "--db", "a", "k"], ["verify", "--path", dir]] {
            let run: CommandResult
            if getuid() == 0 {
                #expect(chmod(dir, 0o700) == 0)
                run = try runCommand(try #require(which("setpriv")),
                                     ["--reuid=65534", "--regid=65534", "--clear-groups", exe.path] + arguments)
            } else {
                #expect(chmod(dir, 0o000) == 0)
                run = try depot(arguments)
            }
            _ = chmod(dir, 0o755)
            #expect(run.status == 1, "\(arguments[0])")
            #expect(run.err.contains("permission denied (the folder cannot be entered)"), "\(arguments[0]): \(run.err)")
        }
    }

    /// What follows `--` is the user's bytes: a key or value that looks like a query's
    /// `--where` or a negative option is stored exactly as given.
    @Test func argumentsAfterTheSeparatorAreStoredAsGiven() throws {
        #expect(try depot("put", "--path", dir, "--db", "t", "--", "--where", "a == b").status == 0)
        #expect(try depot("get", "--path", dir, "--db", "t", "--", "--where").out == "a == b\n")
        #expect(try depot("put", "--path", dir, "--db", "t", "--", "--count", "-5").status == 0)
        #expect(try depot("get", "--path", dir, "--db", "t", "--", "--count").out == "-5\n")
    }

    /// With `--json`, `torture` and `hold-reader` print their progress as JSON objects too.
    @Test func progressLinesAreJSONWithJSON() throws {
        let torture = try depot("torture", "--path", dir, "--mode", "kv", "--count", "2", "--json")
        #expect(torture.status == 0, "\(torture.err)")
        let acks = torture.out.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["ack"] as? Int
        }
        #expect(acks == [1, 2], "\(torture.out)")
        let reader = try depot("hold-reader", "--path", dir, "--seconds", "0", "--json")
        let reading = (try? JSONSerialization.jsonObject(with: Data(reader.out.utf8)) as? [String: Any])?["reading"] as? Int
        #expect(reader.status == 0 && reading != nil, "\(reader.out)\(reader.err)")
    }

    /// Transaction numbers past 2^64 are refused before anything is written, never wrapped
    /// or trapped on.
    @Test func tortureNumbersPastTheLastAreAUsageError() throws {
        for mode in ["kv", "documents"] {
            let run = try depot("torture", "--path", dir, "--mode", mode, "--start", String(UInt64.max), "--count", "2")
            #expect(run.status == 64, "\(mode): \(run.err)")
            #expect(run.err.contains("would pass"), "\(mode): \(run.err)")
        }
        let concurrent = try depot("torture", "--path", dir, "--mode", "kv", "--start", String(UInt64.max - 1), "--count", "3", "--async-writers", "1")
        #expect(concurrent.status == 64, "\(concurrent.err)")
        // Key/value transactions are numbered in 10 digits (the keys' width, which orders them).
        #expect(try depot("torture", "--path", dir, "--mode", "kv", "--start", "9999999999", "--count", "2").status != 0)
        #expect(try depot("torture", "--path", dir, "--mode", "kv", "--start", "9999999999", "--count", "1").status == 0)
        #expect(try depot("torture", "--path", dir, "--mode", "documents", "--start", String(UInt64.max - 1), "--count", "1").status == 0)
    }

    /// Empty or oversized names are usage errors (64) naming the option, as they are in the
    /// other commands; a negative `--key-id` gets the range, not "Missing value".
    @Test func badNamesAndNumbersAreUsageErrorsNamingTheOption() throws {
        #expect(try depot("put", "--path", dir, "--db", "t", "k", "v").status == 0)
        let longName = String(repeating: "d", count: 600)
        for (args, words) in [(["put", "--path", dir, "--db", longName, "k", "v"], "--db is 600 bytes"),
                              (["torture", "--path", dir, "--mode", "kv", "--count", "1", "--writer", longName], "--writer"),
                              (["export", "--path", dir, "--collection", ""], "--collection must not be empty"),
                              (["export", "--path", dir, "--alias", ""], "--alias must not be empty"),
                              (["collections", "--path", dir, "--alias", ""], "--alias must not be empty"),
                              (["backup", "--path", dir, "--to", ""], "--to must not be empty"),
                              (["export", "--path", dir, "--key-id", "-1"], "--key-id must be 0 to 255, got -1")] {
            let run = try runProcess(try #require(depotExecutable()), args)
            #expect(run.status == 64, "\(args[0]) \(words): \(run.err)")
            #expect(run.err.contains(words), "\(args[0]): \(run.err)")
        }
    }

    /// `kv get` in an alias the store does not have says so, instead of "key not found".
    @Test func aKeyValueReadInAMissingAliasNamesTheAlias() throws {
        #expect(try depot("kv", "set", "--path", dir, "k", "1").status == 0)
        let missing = try depot("kv", "get", "--path", dir, "--alias", "nope", "k")
        #expect(missing.status == 1 && missing.err.contains("no alias named 'nope'"), "\(missing.err)")
        #expect(try depot("kv", "get", "--path", dir, "k").out == "1\n")
    }

    /// A key with terminal control sequences is quoted escaped in a message, never sent raw.
    @Test func controlCharactersInMessagesAreEscaped() throws {
        #expect(try depot("put", "--path", dir, "--db", "t", "k", "v").status == 0)
        let run = try depot("get", "--path", dir, "--db", "t", "k\u{1B}[31m\rx")
        #expect(run.status == 1)
        #expect(!run.err.contains("\u{1B}") && !run.err.contains("\r"), "\(run.err)")
        #expect(run.err.contains(#"k\u{1B}[31m\u{D}x"#), "\(run.err)")
    }

    /// An array or object VALUE is refused with the rule for arrays, never matched as text.
    @Test func anArrayValueInAConditionIsRefusedWithTheRule() throws {
        #expect(try depot("doc", "put", "--path", dir, "--collection", "P", "--id", "1", #"{"tags":["a","b"]}"#).status == 0)
        for value in [#"["a","b"]"#, "[]", #"{"a":1}"#] {
            let run = try depot("query", "--path", dir, "--collection", "P", "--where", "tags", "==", value)
            #expect(run.status == 64, "\(value): \(run.err)")
            #expect(run.err.contains("a condition compares one value"), "\(value): \(run.err)")
        }
        let element = try depot("query", "--path", dir, "--collection", "P", "--where", "tags", "==", "b")
        #expect(element.status == 0 && element.out.contains("\"tags\""), "\(element.out)")
    }

    @Test func helpForAnUnknownCommandIsAnError() throws {
        let unknown = try depot("help", "count")
        #expect(unknown.status == 64)
        #expect(unknown.err.contains("unknown command 'count'"))
        let nested = try depot("help", "doc", "nope")
        #expect(nested.status == 64)
        #expect(nested.err.contains("commands of 'depot doc'"), "\(nested.err)")
        #expect(try depot("doc", "help", "nope").err.contains("commands of 'depot doc'"))
        #expect(try depot("help", "doc", "get").status == 0)
    }
}
