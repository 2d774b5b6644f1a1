import Foundation
import Testing
import DepotTestSupport
@testable import Depot
@testable import DepotCore
import DepotLMDB

/// The Swift types a user would register for the fixture.
struct SeedCompany: Document {
    static var collection: String { "Company" }
    var id: String
    var companyName: String
    var employees: [SeedEmployee]
    enum CodingKeys: String, CodingKey { case id = "companyID", companyName, employees }
}
struct SeedEmployee: Document {
    static var collection: String { "Employee" }
    var id: String
    var employeeName: String
    var employeeSalary: Int
    enum CodingKeys: String, CodingKey { case id = "employeeID", employeeName, employeeSalary }
    static var indexes: [DocumentIndex<SeedEmployee>] { [.init(\.employeeSalary, name: "employeeSalary")] }
}

func fixtureFolder() -> URL {
    var url = URL(fileURLWithPath: #filePath)
    while url.path != "/" {
        url.deleteLastPathComponent()
        let candidate = url.appendingPathComponent("Fixtures/CorporateMayhem")
        if FileManager.default.fileExists(atPath: candidate.path) { return candidate }
    }
    return URL(fileURLWithPath: FileManager.default.currentDirectoryPath + "/Fixtures/CorporateMayhem")
}

/// A copy of the fixture tree in a temporary folder that a test may change.
func fixtureCopy(_ folder: TemporaryFolder) throws -> URL {
    let target = URL(fileURLWithPath: folder.sub("seed"))
    try FileManager.default.copyItem(at: fixtureFolder(), to: target)
    return target
}

/// A seeded type with a unique index.
struct SeedBadge: Document {
    var id: Int
    var code: String
    static var indexes: [DocumentIndex<SeedBadge>] { [.init(\.code, unique: true)] }
}

@Suite("Seeding")
struct SeedTests {
    let folder = TemporaryFolder()
    let store: Store
    init() throws { store = try Store(path: folder.sub("store")) }

    /// Seeding reads and parses the whole tree before it takes the writer: a write made from
    /// another thread while files are being read completes at once.
    @Test func filesAreReadWithoutHoldingTheWriter() throws {
        let writes = LockedBox(0)
        var options = SeedOptions()
        options.progress = { [store] _ in
            let done = DispatchSemaphore(value: 0)
            Thread {
                if (try? store.write { tx in try tx.park(Department(id: "during", name: "x")) }) != nil { writes.set(writes.get() + 1) }
                done.signal()
            }.start()
            _ = done.wait(timeout: .now() + 10)
        }
        let summary = try store.seed(from: fixtureFolder().appendingPathComponent("Main.seed.json"), options: options)
        #expect(summary.filesRead == 10)
        #expect(writes.get() == summary.filesRead, "every write during the reading phase went through")
        #expect(try store.retrieve(Department.self, id: "during") != nil)
    }

    @Test func corporateMayhemEndToEnd() throws {
        store.registerSeedType(SeedCompany.self)
        store.registerSeedType(SeedEmployee.self)
        let summary = try store.seed(from: fixtureFolder().appendingPathComponent("Main.seed.json"))
        #expect(summary.documentsPerCollection == ["Company": 2, "Employee": 8, "Department": 1])
        #expect(summary.filesRead == 10)
        #expect(summary.generatedIDs == 6)
        let companies = try store.retrieveAll(SeedCompany.self)
        let foo = try #require(companies.first { $0.companyName == "Foo Inc." })
        #expect(!foo.id.isEmpty)
        #expect(foo.employees.count == 5)
        #expect(Set(foo.employees.map(\.employeeName)) == ["Margaret Hamilton", "Ken Thompson", "Dennis Ritchie", "Barbara Liskov", "Frances Allen"])
        let ids = foo.employees.map(\.id) + [foo.id]
        #expect(Set(ids).count == ids.count && ids.allSatisfy { !$0.isEmpty })
        // Numbers, booleans, arrays and Unicode survive (schemaless view).
        let zoe = try store.read { tx in try tx.query(collection: "Employee", conditions: [FieldCondition(field: "employeeID", op: .equal, value: "A-E-1")]) }
        let doc = try #require(zoe.documents.first?.document)
        #expect(doc["employeeName"] == .string("Zoë Ångström"))
        #expect(doc["employeeSalary"] == .int(132000))
        #expect(doc["isManager"] == .bool(true))
        #expect(doc["rating"] == .double(4.5))
        #expect(doc["skills"] == .array([.string("Swift"), .string("LMDB"), .string("日本語")]))
        // The department seen in two files is one record, referenced from both employees' files.
        #expect(doc["department"] == .array([.reference(collection: "Department", id: .string("ENG"))]))
        // The registered type's index was filled.
        let rich = try store.read { try $0.execute(FetchRequest<SeedEmployee>().matching(\.employeeSalary, .atLeast(200_000), field: "employeeSalary")) }
        #expect(rich.plan.usedIndex)
        #expect(rich.documents.map(\.employeeName) == ["Margaret Hamilton"])
    }

    @Test func reseedingUpdatesByIdentity() throws {
        let main = fixtureFolder().appendingPathComponent("CompanyA.seed.json")
        try store.seed(from: main)
        try store.seed(from: main)
        let counts = try store.read { tx in try tx.collections().map { c in (c, try tx.query(collection: c, conditions: []).documents.count) } }
        #expect(counts.map(\.0) == ["Company", "Department", "Employee"])
        #expect(counts.map(\.1) == [1, 1, 3])
    }

    @Test func passThroughAndRemoteViaLoopback() throws {
        let copy = try fixtureCopy(folder)
        let server = try LoopbackHTTPServer(serving: copy.path)
        defer { server.stop() }
        let remoteMain = copy.appendingPathComponent("RemoteMain.seed.json")
        try Data("""
        {"seedlings": [{"seedUrl": "http://127.0.0.1:\(server.port)/CompanyA.seed.json"}, {"seedFile": "CompanyB.seed.json"}]}
        """.utf8).write(to: remoteMain)
        // Refused unless the host is allowed; nothing stored.
        let refused = #expect(throws: DepotError.self) { try store.seed(from: remoteMain) }
        #expect(refused?.seedProblem == .remoteNotAllowed)
        #expect(try store.read { try $0.collections() }.isEmpty)
        var options = SeedOptions()
        options.allowedRemoteHosts = ["127.0.0.1"]
        let summary = try store.seed(from: remoteMain, options: options)
        #expect(summary.documentsPerCollection == ["Company": 2, "Employee": 8, "Department": 1])
        #expect(server.requestCount >= 5, "CompanyA and the files it links came over HTTP")
    }

    @Test func conflictingDuplicateNamesBothPlaces() throws {
        let copy = try fixtureCopy(folder)
        try Data(#"{"Department": {"departmentID": "ENG", "departmentName": "Other", "floor": 3}}"#.utf8)
            .write(to: copy.appendingPathComponent("EngineeringDepartment.seed.json"))
        let error = #expect(throws: DepotError.self) { try store.seed(from: copy.appendingPathComponent("Main.seed.json")) }
        #expect(error?.seedProblem == .conflictingDuplicate)
        #expect(error?.description.contains("EngineeringDepartment.seed.json") == true)
        #expect(error?.description.contains("CompanyA.seed.json") == true)
        #expect(error.map { ($0 as NSError).localizedDescription } == error?.description, "localizedDescription is the message")
        let info = error.map { ($0 as NSError).userInfo } ?? [:]
        #expect(info["DepotErrorCode"] as? String == "seedFailed")
        #expect(info["DepotErrorSeedProblem"] as? String == "conflictingDuplicate")
        #expect(error?.file?.hasSuffix(".seed.json") == true && info["DepotErrorFile"] as? String == error?.file, "\(info)")
        #expect(info["DepotErrorFieldPath"] as? String == error?.fieldPath && error?.fieldPath?.hasPrefix("$.Department") == true, "\(info)")
        // The code's pattern matches it.
        do {
            try store.seed(from: copy.appendingPathComponent("Main.seed.json"))
            Issue.record("the conflicting tree was seeded")
        } catch DepotError.seedFailed {
        } catch {
            Issue.record("not matched by DepotError.seedFailed: \(error)")
        }
    }

    struct Failure: CustomTestStringConvertible, Sendable {
        let name: String
        let kind: DepotError.SeedProblem
        let place: String
        /// The JSON path in `place` (nil: the file as a whole).
        let jsonPath: String?
        let prepare: @Sendable (URL) throws -> Void
        var testDescription: String { name }
    }

    static let failures: [Failure] = [
        Failure(name: "missing file", kind: .missingFile, place: "CompanyBEmployees.seed.json", jsonPath: "$.seedlings[1]") { dir in
            try FileManager.default.removeItem(at: dir.appendingPathComponent("CompanyBStaff.seed.json"))
        },
        Failure(name: "malformed JSON deep in the tree after valid files", kind: .malformedJSON, place: "CompanyBStaff.seed.json", jsonPath: nil) { dir in
            try Data(#"{"Employee": [{"employeeName": "x", }"#.utf8).write(to: dir.appendingPathComponent("CompanyBStaff.seed.json"))
        },
        Failure(name: "cycle", kind: .cycle, place: "CompanyBStaff.seed.json", jsonPath: "$.seedlings[0]") { dir in
            try Data(#"{"seedlings": [{"seedFile": "CompanyBEmployees.seed.json"}]}"#.utf8).write(to: dir.appendingPathComponent("CompanyBStaff.seed.json"))
        },
        Failure(name: "file linking itself", kind: .cycle, place: "CompanyBStaff.seed.json", jsonPath: "$.seedlings[0]") { dir in
            try Data(#"{"seedlings": [{"seedFile": "CompanyBStaff.seed.json"}]}"#.utf8).write(to: dir.appendingPathComponent("CompanyBStaff.seed.json"))
        },
        Failure(name: "escape by ..", kind: .outsideRoot, place: "CompanyBEmployees.seed.json", jsonPath: "$.seedlings[0]") { dir in
            try Data(#"{"seedlings": [{"seedFile": "../outside.seed.json"}]}"#.utf8).write(to: dir.appendingPathComponent("CompanyBEmployees.seed.json"))
            try Data(#"{"Employee": {"employeeID": "evil"}}"#.utf8).write(to: dir.deletingLastPathComponent().appendingPathComponent("outside.seed.json"))
        },
        Failure(name: "absolute path", kind: .absolutePath, place: "CompanyBEmployees.seed.json", jsonPath: "$.seedlings[0]") { dir in
            try Data(#"{"seedlings": [{"seedFile": "/etc/passwd"}]}"#.utf8).write(to: dir.appendingPathComponent("CompanyBEmployees.seed.json"))
        },
        Failure(name: "symlink out of the root", kind: .outsideRoot, place: "CompanyBEmployees.seed.json", jsonPath: "$.seedlings[1]") { dir in
            let outside = dir.deletingLastPathComponent().appendingPathComponent("secret.seed.json")
            try Data(#"{"Employee": {"employeeID": "evil"}}"#.utf8).write(to: outside)
            try FileManager.default.removeItem(at: dir.appendingPathComponent("CompanyBStaff.seed.json"))
            try FileManager.default.createSymbolicLink(at: dir.appendingPathComponent("CompanyBStaff.seed.json"), withDestinationURL: outside)
        },
        Failure(name: "remote not allowed", kind: .remoteNotAllowed, place: "CompanyBEmployees.seed.json", jsonPath: "$.seedlings[0]") { dir in
            try Data(#"{"seedlings": [{"seedUrl": "https://example.com/x.seed.json"}]}"#.utf8).write(to: dir.appendingPathComponent("CompanyBEmployees.seed.json"))
        },
        Failure(name: "seedling with both a file and a URL", kind: .invalidSeed, place: "CompanyBEmployees.seed.json", jsonPath: "$.seedlings[0]") { dir in
            try Data(#"{"seedlings": [{"seedFile": "CompanyBStaff.seed.json", "seedUrl": "https://example.com/x.seed.json"}]}"#.utf8)
                .write(to: dir.appendingPathComponent("CompanyBEmployees.seed.json"))
        },
        Failure(name: "seedling path cut by a NUL", kind: .invalidSeed, place: "CompanyBEmployees.seed.json", jsonPath: "$.seedlings[0]") { dir in
            try Data(#"{"seedlings": [{"seedFile": "CompanyBStaff.seed.json\u0000evil"}]}"#.utf8)
                .write(to: dir.appendingPathComponent("CompanyBEmployees.seed.json"))
        },
        Failure(name: "seedling with an unknown key", kind: .invalidSeed, place: "CompanyBEmployees.seed.json", jsonPath: "$.seedlings[0]") { dir in
            try Data(#"{"seedlings": [{"seedFile": "CompanyBStaff.seed.json", "note": "x"}]}"#.utf8)
                .write(to: dir.appendingPathComponent("CompanyBEmployees.seed.json"))
        },
        Failure(name: "relationship with an extra key", kind: .invalidSeed, place: "CompanyBStaff.seed.json", jsonPath: "$.Employee.team") { dir in
            try Data(#"{"Employee": {"employeeID": "x", "team": {"seedlings": [], "extra": 1}}}"#.utf8)
                .write(to: dir.appendingPathComponent("CompanyBStaff.seed.json"))
        },
        Failure(name: "entity that is not an object", kind: .invalidSeed, place: "CompanyBStaff.seed.json", jsonPath: "$.Employee[0]") { dir in
            try Data(#"{"Employee": [1, 2]}"#.utf8).write(to: dir.appendingPathComponent("CompanyBStaff.seed.json"))
        },
    ]

    @Test(arguments: failures)
    func failureLeavesTheStoreUnchangedAndNamesThePlace(_ failure: Failure) throws {
        try store.write { tx in try tx.park(sampleEmployee("before")) }
        let copy = try fixtureCopy(folder)
        try failure.prepare(copy)
        let error = #expect(throws: DepotError.self) { try store.seed(from: copy.appendingPathComponent("Main.seed.json")) }
        #expect(error?.code == .seedFailed)
        #expect(error?.seedProblem == failure.kind, "\(String(describing: error))")
        #expect(error?.file?.hasSuffix(failure.place) == true, "\(String(describing: error))")
        #expect(error?.fieldPath == failure.jsonPath, "\(String(describing: error))")
        #expect(try store.read { try $0.collections() } == ["Employee"])
        #expect(try store.retrieveAll(Employee.self).map(\.id) == ["before"])
    }

    /// A syntax error was placed by its byte offset only: it names line and column now (the
    /// column in characters, so text before it in other scripts does not shift it).
    @Test func aSyntaxErrorNamesItsLineAndColumn() throws {
        let file = URL(fileURLWithPath: folder.path).appendingPathComponent("Broken.seed.json")
        try Data("{\n  \"Employee\": [\n    {\"employeeID\": \"é1\"},\n    {\"employeeID\": \"é2\" \"x\": 1}\n  ]\n}\n".utf8).write(to: file)
        let error = #expect(throws: DepotError.self) { try store.seed(from: file) }
        #expect(error?.seedProblem == .malformedJSON)
        #expect(error?.message.contains("line 4, column 25") == true, "\(String(describing: error))")
        #expect(error?.file?.hasSuffix("Broken.seed.json") == true)
        #expect(Seeder.lineAndColumn(of: 0, in: Data()) == (1, 1))
        #expect(Seeder.lineAndColumn(of: 99, in: Data("a\nbc".utf8)) == (2, 3))
    }

    /// A unique-index clash in a seed tree was a bare uniqueIndexViolation, without the file
    /// and the instance: it is a seed failure naming both now, and nothing is stored.
    @Test func aUniqueIndexClashNamesTheInstance() throws {
        store.registerSeedType(SeedBadge.self)
        let file = URL(fileURLWithPath: folder.path).appendingPathComponent("Badges.seed.json")
        try Data(#"{"SeedBadge": [{"id": 1, "code": "A"}, {"id": 2, "code": "B"}, {"id": 3, "code": "A"}]}"#.utf8).write(to: file)
        let error = #expect(throws: DepotError.self) { try store.seed(from: file) }
        #expect(error?.code == .seedFailed && error?.seedProblem == .uniqueIndexViolation, "\(String(describing: error))")
        #expect(error?.file?.hasSuffix("Badges.seed.json") == true && error?.fieldPath == "$.SeedBadge[2]", "\(String(describing: error))")
        #expect(try store.count(SeedBadge.self) == 0)
    }

    @Test func aFolderGivenAsTheSeedFileIsNamedAsSuch() throws {
        let error = #expect(throws: DepotError.self) { try store.seed(from: URL(fileURLWithPath: folder.path)) }
        #expect(error?.seedProblem == .unreadableFile)
        #expect(error?.message.hasSuffix(": is a folder, not a seed file") == true)
    }

    @Test func limitsAreEnforced() throws {
        var options = SeedOptions()
        options.maxFiles = 3
        let files = #expect(throws: DepotError.self) { try store.seed(from: fixtureFolder().appendingPathComponent("Main.seed.json"), options: options) }
        #expect(files?.seedProblem == .limitExceeded && files?.message.contains("maxFiles") == true)
        options = SeedOptions()
        options.maxBytesPerFile = 100
        let bytes = #expect(throws: DepotError.self) { try store.seed(from: fixtureFolder().appendingPathComponent("Main.seed.json"), options: options) }
        #expect(bytes?.seedProblem == .limitExceeded)
        options = SeedOptions()
        options.maxDepth = 2
        let depth = #expect(throws: DepotError.self) { try store.seed(from: fixtureFolder().appendingPathComponent("Main.seed.json"), options: options) }
        #expect(depth?.seedProblem == .limitExceeded && depth?.message.contains("maxDepth") == true)
        #expect(try store.read { try $0.collections() }.isEmpty)
    }

    @Test func registeredTypeMismatchNamesFileAndPath() throws {
        struct StrictEmployee: Document {
            static var collection: String { "Employee" }
            var id: String
            var employeeName: String
            var employeeSalary: String // the fixture has numbers
            enum CodingKeys: String, CodingKey { case id = "employeeID", employeeName, employeeSalary }
        }
        store.registerSeedType(StrictEmployee.self)
        let error = #expect(throws: DepotError.self) { try store.seed(from: fixtureFolder().appendingPathComponent("CompanyB.seed.json")) }
        #expect(error?.seedProblem == .typeMismatch)
        #expect(error?.description.contains("employeeSalary") == true)
        #expect(error?.file?.hasSuffix(".seed.json") == true)
        #expect(try store.read { try $0.collections() }.isEmpty)
    }

    @Test func generatedLargeFixture() throws {
        let target = URL(fileURLWithPath: folder.sub("large"))
        let (root, files, employees) = try SeedFixture.generate(in: target, companies: 5, employeesPerCompany: 120, employeesPerFile: 50)
        #expect(files == 5 * 3 + 5 + 1)
        let summary = try store.seed(from: root)
        #expect(summary.documentsPerCollection == ["Company": 5, "Employee": employees])
        #expect(summary.filesRead == files)
    }

    /// DLData's own seed files: "<uniqueID>" asks for a generated unique number (in the
    /// identifying attribute or any other property) and `bundleResource://Name.seed` links a
    /// file of the seed folder (`Name.seed`, else `Name.seed.json`).
    @Test func dlDataUniqueIDMarkersAndBundleResourceLinks() throws {
        let root = URL(fileURLWithPath: folder.sub("dldata"))
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let files = [
            "Main.seed.json": #"{"seedlings": [{"seedUrl": "bundleResource://CompanyA.seed"}]}"#,
            "CompanyA.seed.json": #"""
                {"Company": {"companyName": "Diabolical Labs, LLC", "companyID": "<uniqueID>",
                             "employees": {"seedlings": [{"seedUrl": "bundleResource://CompanyAEmployees.seed"}]}}}
                """#,
            "CompanyAEmployees.seed.json": #"""
                {"Employee": [{"employeeName": "Tess", "employeeID": "<uniqueID>", "badge": "<uniqueID>"},
                              {"employeeName": "Lex", "employeeID": "<uniqueID>", "badge": "<uniqueID>"}]}
                """#,
        ]
        for (name, text) in files { try Data(text.utf8).write(to: root.appendingPathComponent(name)) }
        let summary = try store.seed(from: root.appendingPathComponent("Main.seed.json"))
        #expect(summary.documentsPerCollection == ["Company": 1, "Employee": 2])
        #expect(summary.generatedIDs == 5)
        try store.read { tx throws in
            let employees = try exported(tx, "Employee")
            #expect(employees.count == 2)
            var numbers: [UInt64] = []
            for employee in employees {
                guard case .uint(let id) = employee.id, case .uint(let badge)? = employee.document["badge"] else {
                    Issue.record("generated values are numbers: \(employee.id), \(String(describing: employee.document["badge"]))")
                    continue
                }
                numbers += [id, badge]
            }
            #expect(Set(numbers).count == 4, "every generated value is unique")
            let company = try #require(try exported(tx, "Company").first)
            let staff = company.document["employees"]
            #expect(staff == .array(employees.map { .reference(collection: "Employee", id: $0.id) }), "the relationship points at the generated IDs")
        }
        // A bundleResource link to a file that is not there names what it looked for.
        try Data(#"{"seedlings": [{"seedUrl": "bundleResource://Nope.seed"}]}"#.utf8).write(to: root.appendingPathComponent("Bad.seed.json"))
        let error = #expect(throws: DepotError.self) { try store.seed(from: root.appendingPathComponent("Bad.seed.json")) }
        #expect(error?.seedProblem == .missingFile && error?.description.contains("'Nope.seed.json'") == true, "\(String(describing: error))")
    }
}
