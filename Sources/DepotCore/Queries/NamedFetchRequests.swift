import Foundation

/// The kinds of values a fetch request's substitution variable accepts: scalars, or a document
/// of a given type (DLData's `companyWellPaidEmployees` with `{"company": company}`).
public struct SubstitutionType: Sendable, Hashable, CustomStringConvertible {
    private enum Kind: Hashable { case string, int, double, bool, uuid, date, document(ObjectIdentifier) }
    private let kind: Kind
    /// How the type is named in messages (`"string"`, `"a Company document"`).
    public let description: String

    /// A `String`.
    public static let string = SubstitutionType(kind: .string, description: "string")
    /// An integer (`Int`, `Int64`, `Int32`).
    public static let int = SubstitutionType(kind: .int, description: "int")
    /// A floating-point number (`Double`, `Float`, or an `Int`).
    public static let double = SubstitutionType(kind: .double, description: "double")
    /// A `Bool`.
    public static let bool = SubstitutionType(kind: .bool, description: "bool")
    /// A `UUID`.
    public static let uuid = SubstitutionType(kind: .uuid, description: "uuid")
    /// A `Date`.
    public static let date = SubstitutionType(kind: .date, description: "date")
    /// A document of type `D` (read it in the request with `vars.document("company", as: Company.self)`).
    public static func document<D: Document>(_ type: D.Type) -> SubstitutionType {
        SubstitutionType(kind: .document(ObjectIdentifier(D.self)), description: "a \(TypeNames.name(of: D.self)) document")
    }

    /// The name used before this was a struct (`"string"`, `"int"`, …).
    public var rawValue: String { description }

    func accepts(_ value: Any) -> Bool {
        switch kind {
        case .string: return value is String
        case .int: return value is Int || value is Int64 || value is Int32
        case .double: return value is Double || value is Float || value is Int
        case .bool: return value is Bool
        case .uuid: return value is UUID
        case .date: return value is Date
        case .document(let type): return ObjectIdentifier(Swift.type(of: value)) == type
        }
    }
}

/// The values given to a named fetch request, checked against its declared variables.
public struct Substitutions: @unchecked Sendable {
    // @unchecked Sendable: only read inside the template's closure, on the caller's thread.
    let request: String
    let values: [String: Any]
    let declared: [String: SubstitutionType]

    /// The value of `name` as `T`.
    ///
    /// - Throws: `DepotError` with code `DepotError.Code/missingSubstitution` when no value was
    ///   given, `DepotError.Code/mistypedSubstitution` when it is not a `T` (or `name` was not
    ///   declared in `variables:`).
    public subscript<T>(_ name: String, as type: T.Type = T.self) -> T {
        get throws {
            guard declared[name] != nil else {
                throw DepotError.mistypedSubstitution(request: request, variable: name, expected: "a declared variable",
                                                      actual: "an undeclared name; declare it in `variables:`")
            }
            guard let value = values[name] else { throw DepotError.missingSubstitution(request: request, variable: name) }
            if let v = value as? T { return v }
            if T.self == Double.self, let i = value as? Int, let converted = Double(i) as? T { return converted }
            if T.self == Int.self, let i = value as? Int64, let narrow = Int(exactly: i), let converted = narrow as? T { return converted }
            throw DepotError.mistypedSubstitution(request: request, variable: name, expected: "\(T.self)",
                                                  actual: String(describing: Swift.type(of: value)))
        }
    }

    /// The document given for `name` (declared as ``SubstitutionType/document(_:)``).
    public func document<D: Document>(_ name: String, as type: D.Type = D.self) throws -> D {
        try self[name, as: D.self]
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
    ///         .matching(\.company, .equalTo(try vars["company", as: String.self]))
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
    /// - Throws: `DepotError` with code `DepotError.Code/unknownFetchRequest`,
    ///   `DepotError.Code/fetchRequestTypeMismatch`, `DepotError.Code/missingSubstitution` or
    ///   `DepotError.Code/mistypedSubstitution`.
    public func fetchRequest<D: Document>(named name: String, as type: D.Type = D.self, substitutions: [String: Any] = [:]) throws -> FetchRequest<D> {
        guard let template = store.core.template(named: name) else { throw DepotError.unknownFetchRequest(name) }
        guard template.documentType == D.self else {
            throw DepotError.fetchRequestTypeMismatch(name: name, registered: String(describing: template.documentType), requested: String(describing: D.self))
        }
        for (variable, kind) in template.variables.sorted(by: { $0.key < $1.key }) {
            guard let value = substitutions[variable] else { throw DepotError.missingSubstitution(request: name, variable: variable) }
            guard kind.accepts(value) else {
                throw DepotError.mistypedSubstitution(request: name, variable: variable, expected: kind.rawValue, actual: String(describing: Swift.type(of: value)))
            }
        }
        guard let request = try template.make(Substitutions(request: name, values: substitutions, declared: template.variables)) as? FetchRequest<D> else {
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
