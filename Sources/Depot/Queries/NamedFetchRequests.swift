import Foundation

/// The kinds of values a fetch request's substitution variable accepts.
public enum SubstitutionType: String, Sendable, Hashable {
    case string, int, double, bool, uuid, date

    func accepts(_ value: Any) -> Bool {
        switch self {
        case .string: return value is String
        case .int: return value is Int || value is Int64 || value is Int32
        case .double: return value is Double || value is Float || value is Int
        case .bool: return value is Bool
        case .uuid: return value is UUID
        case .date: return value is Date
        }
    }
}

/// The values given to a named fetch request, checked against its declared variables.
public struct Substitutions: @unchecked Sendable {
    // @unchecked Sendable: values are checked to be one of the Sendable scalar kinds above.
    let request: String
    let values: [String: Any]

    /// The value of `name` as `T` (already checked when the request was executed).
    public subscript<T>(_ name: String, as type: T.Type = T.self) -> T {
        if let v = values[name] as? T { return v }
        if T.self == Double.self, let i = values[name] as? Int { return Double(i) as! T }
        if T.self == Int.self, let i = values[name] as? Int64 { return Int(i) as! T }
        preconditionFailure("fetch request '\(request)': '\(name)' is not a \(T.self); declare it in `variables:`")
    }
}

/// A registered fetch request: a name, the variables it takes, and how to build it.
struct FetchRequestTemplate: @unchecked Sendable {
    // @unchecked Sendable: `make` wraps the caller's @Sendable closure; `documentType` is a metatype only compared by name.
    let name: String
    let documentType: Any.Type
    let variables: [String: SubstitutionType]
    let make: (Substitutions) throws -> Any
}

extension Store {
    /// Registers a fetch request under `name` (DLData's fetch request templates), for every alias
    /// of the store's environment.
    ///
    /// ```swift
    /// store.registerFetchRequest("companyWellPaidEmployees", for: Employee.self,
    ///                            variables: ["company": .string]) { vars in
    ///     FetchRequest<Employee>()
    ///         .matching(\.company, .equalTo(vars["company", as: String.self]))
    ///         .matching(\.salary, .greaterThan(100_000))
    /// }
    /// let list = try store.read { try $0.fetch(named: "companyWellPaidEmployees", as: Employee.self,
    ///                                           substitutions: ["company": "Foo Inc."]) }
    /// ```
    public func registerFetchRequest<D: Document>(_ name: String, for type: D.Type, variables: [String: SubstitutionType] = [:],
                                                  _ make: @escaping @Sendable (Substitutions) throws -> FetchRequest<D>) {
        core.register(FetchRequestTemplate(name: name, documentType: D.self, variables: variables, make: { try make($0) }))
    }

    /// Names of the registered fetch requests, sorted.
    public var fetchRequestNames: [String] { core.templateNames }
}

extension DocumentTransaction {
    /// The registered request `name`, built with `substitutions`, to adjust (limit, sort) before
    /// executing it.
    ///
    /// - Throws: ``DepotError/unknownFetchRequest(_:)``, ``DepotError/fetchRequestTypeMismatch(name:registered:requested:)``,
    ///   ``DepotError/missingSubstitution(request:variable:)``, ``DepotError/mistypedSubstitution(request:variable:expected:actual:)``.
    public func fetchRequest<D: Document>(named name: String, as type: D.Type = D.self, substitutions: [String: Any] = [:]) throws -> FetchRequest<D> {
        guard let template = context.core.template(named: name) else { throw DepotError.unknownFetchRequest(name) }
        guard template.documentType == D.self else {
            throw DepotError.fetchRequestTypeMismatch(name: name, registered: String(describing: template.documentType), requested: String(describing: D.self))
        }
        for (variable, kind) in template.variables.sorted(by: { $0.key < $1.key }) {
            guard let value = substitutions[variable] else { throw DepotError.missingSubstitution(request: name, variable: variable) }
            guard kind.accepts(value) else {
                throw DepotError.mistypedSubstitution(request: name, variable: variable, expected: kind.rawValue, actual: String(describing: Swift.type(of: value)))
            }
        }
        guard let request = try template.make(Substitutions(request: name, values: substitutions)) as? FetchRequest<D> else {
            throw DepotError.fetchRequestTypeMismatch(name: name, registered: String(describing: template.documentType), requested: String(describing: D.self))
        }
        return request
    }

    /// Executes the registered request `name`.
    public func fetch<D: Document>(named name: String, as type: D.Type = D.self, substitutions: [String: Any] = [:]) throws -> [D] {
        try fetch(fetchRequest(named: name, as: D.self, substitutions: substitutions))
    }

    /// Counts the results of the registered request `name` (DLData's `countForRequestNamed:`).
    public func count<D: Document>(named name: String, as type: D.Type = D.self, substitutions: [String: Any] = [:]) throws -> Int {
        try count(fetchRequest(named: name, as: D.self, substitutions: substitutions))
    }
}
