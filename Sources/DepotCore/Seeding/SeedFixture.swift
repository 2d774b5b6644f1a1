import Foundation

/// Writes large seed trees for tests and benchmarks (they are generated, never committed).
public enum SeedFixture {
    /// Writes `Main.seed.json` into `folder`, linking one file per company; each company's
    /// `employees` relationship links files of `employeesPerFile` employees. Company and employee
    /// IDs are fixed strings (so re-seeding updates), salaries and names are deterministic.
    /// Returns the root file and how many files and employees were written.
    @discardableResult
    public static func generate(in folder: URL, companies: Int, employeesPerCompany: Int, employeesPerFile: Int = 250) throws
        -> (root: URL, files: Int, employees: Int) {
        for (name, value) in [("companies", companies), ("employeesPerCompany", employeesPerCompany), ("employeesPerFile", employeesPerFile)] where value < 0 {
            throw DepotError.invalidOption(name, allowed: "0 or more, not \(value)")
        }
        guard companies.multipliedReportingOverflow(by: employeesPerCompany).overflow == false else {
            throw DepotError.invalidOption("employeesPerCompany", allowed: "a total of employees (companies × employeesPerCompany) that an Int holds")
        }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var files = 0
        func write(_ object: Any, _ name: String) throws {
            let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
            try data.write(to: folder.appendingPathComponent(name))
            files += 1
        }
        var companyLinks: [[String: String]] = []
        for c in 0..<companies {
            var employeeLinks: [[String: String]] = []
            var start = 0
            var part = 0
            while start < employeesPerCompany {
                let end = min(employeesPerCompany, start + max(1, employeesPerFile))
                let employees: [[String: Any]] = (start..<end).map { e in
                    ["employeeID": "C\(c)-E\(e)", "employeeName": "Employee \(e) of \(c)",
                     "employeeSalary": 30_000 + (c * 7919 + e * 104_729) % 170_000, "isManager": e % 50 == 0,
                     "skills": ["Swift", e % 2 == 0 ? "LMDB" : "SQLite"]]
                }
                let name = "Company\(c)-Employees\(part).seed.json"
                try write(["Employee": employees], name)
                employeeLinks.append(["seedFile": name])
                start = end
                part += 1
            }
            let company: [String: Any] = ["companyID": "C\(c)", "companyName": "Company \(c)", "founded": 1950 + c % 70,
                                          "employees": ["seedlings": employeeLinks]]
            let name = "Company\(c).seed.json"
            try write(["Company": company], name)
            companyLinks.append(["seedFile": name])
        }
        try write(["seedlings": companyLinks], "Main.seed.json")
        return (folder.appendingPathComponent("Main.seed.json"), files, companies * employeesPerCompany)
    }
}
