#if Macros
import SwiftDiagnostics
import SwiftSyntax

/// One stored property as synthesized `Codable` sees it.
struct StoredField {
    /// The property's name (as written, backticks removed).
    let name: String
    /// The key stored in records (the `CodingKeys` raw value, else the name).
    let key: String
    /// The declared type, as written.
    let type: TypeSyntax
    /// Whether the type is written as an optional (`T?`, `T!`, `Optional<T>`): encoded with
    /// `encodeIfPresent` (nothing for nil) and decoded with `decodeIfPresent`, like synthesized code.
    let isOptional: Bool
    /// The type without its optional wrapper.
    let wrapped: TypeSyntax
    /// Whether the property is decoded (a `let` with an initial value is encoded only, as in
    /// synthesized `Codable`).
    let isDecoded: Bool
    /// Whether the property has an initial value.
    let hasInitialValue: Bool
}

/// A problem the macro reports instead of expanding.
struct FieldError: Error {
    let node: Syntax
    let message: String
}

/// Diagnostic message of the `@BinaryCodable` macro.
struct BinaryCodableMessage: DiagnosticMessage {
    let message: String
    var diagnosticID: MessageID { MessageID(domain: "DepotMacros", id: "BinaryCodable") }
    var severity: DiagnosticSeverity { .error }
}

enum StoredFields {
    /// The stored properties of `decl` that synthesized `Codable` encodes, in declaration order,
    /// with their keys; throws `FieldError` for what the generated code cannot match.
    static func collect(_ decl: StructDeclSyntax) throws -> [StoredField] {
        let renames = try codingKeys(decl)
        try refuseCustomCoding(decl)
        var fields: [StoredField] = []
        for member in decl.memberBlock.members {
            guard let variable = member.decl.as(VariableDeclSyntax.self) else { continue }
            if variable.modifiers.contains(where: { ["static", "class", "lazy"].contains($0.name.text) }) {
                if variable.modifiers.contains(where: { $0.name.text == "lazy" }) {
                    throw FieldError(node: Syntax(variable), message: "@BinaryCodable does not support 'lazy' properties")
                }
                continue
            }
            let isLet = variable.bindingSpecifier.tokenKind == .keyword(.let)
            var laterType: TypeSyntax?
            var found: [StoredField] = []
            for binding in variable.bindings.reversed() {
                if let type = binding.typeAnnotation?.type { laterType = type }
                if let accessors = binding.accessorBlock, !isObserversOnly(accessors) { continue } // computed
                guard let pattern = binding.pattern.as(IdentifierPatternSyntax.self) else {
                    throw FieldError(node: Syntax(binding.pattern), message: "@BinaryCodable needs one name per stored property")
                }
                if !variable.attributes.isEmpty {
                    throw FieldError(node: Syntax(variable.attributes),
                                     message: "@BinaryCodable does not support property wrappers or attributes on stored properties")
                }
                let name = pattern.identifier.text.filter { $0 != "`" }
                let hasValue = binding.initializer != nil
                let key: String
                if let renames {
                    guard let renamed = renames[name] else {
                        guard hasValue else {
                            throw FieldError(node: Syntax(binding), message: "'\(name)' is not in CodingKeys and has no initial value")
                        }
                        continue
                    }
                    key = renamed
                } else {
                    key = name
                }
                guard let type = binding.typeAnnotation?.type ?? (binding.initializer == nil ? laterType : nil) else {
                    throw FieldError(node: Syntax(binding), message: "@BinaryCodable needs an explicit type for '\(name)'")
                }
                let (isOptional, wrapped) = unwrapOptional(type)
                found.append(StoredField(name: name, key: key, type: type.trimmed, isOptional: isOptional,
                                         wrapped: wrapped.trimmed, isDecoded: !(isLet && hasValue), hasInitialValue: hasValue))
            }
            fields.append(contentsOf: found.reversed())
        }
        if let renames {
            let names = Set(fields.map(\.name))
            for (name, _) in renames where !names.contains(name) {
                throw FieldError(node: Syntax(decl.name), message: "CodingKeys case '\(name)' matches no stored property")
            }
        }
        return fields
    }

    static func isObserversOnly(_ block: AccessorBlockSyntax) -> Bool {
        guard case .accessors(let list) = block.accessors else { return false }
        return list.allSatisfy { [.keyword(.willSet), .keyword(.didSet)].contains($0.accessorSpecifier.tokenKind) }
    }

    /// `(true, T)` for `T?`, `T!` and `Optional<T>`.
    static func unwrapOptional(_ type: TypeSyntax) -> (Bool, TypeSyntax) {
        if let optional = type.as(OptionalTypeSyntax.self) { return (true, optional.wrappedType) }
        if let iuo = type.as(ImplicitlyUnwrappedOptionalTypeSyntax.self) { return (true, iuo.wrappedType) }
        if let named = type.as(IdentifierTypeSyntax.self), named.name.text == "Optional",
           let arguments = named.genericArgumentClause?.arguments, arguments.count == 1,
           let first = arguments.first, case .type(let wrapped) = first.argument {
            return (true, wrapped)
        }
        return (false, type)
    }

    /// The keys of a nested `CodingKeys` enum by case name, or nil when the type declares none.
    static func codingKeys(_ decl: StructDeclSyntax) throws -> [String: String]? {
        for member in decl.memberBlock.members {
            guard let keys = member.decl.as(EnumDeclSyntax.self), keys.name.text == "CodingKeys" else { continue }
            let inherited = keys.inheritanceClause?.inheritedTypes.map { $0.type.trimmedDescription } ?? []
            guard inherited.contains("String") || inherited.allSatisfy({ $0 != "Int" }) else {
                throw FieldError(node: Syntax(keys.name), message: "@BinaryCodable supports String CodingKeys only")
            }
            var result: [String: String] = [:]
            for caseMember in keys.memberBlock.members {
                if caseMember.decl.is(EnumCaseDeclSyntax.self) == false {
                    throw FieldError(node: Syntax(caseMember), message: "@BinaryCodable supports CodingKeys with plain cases only")
                }
                guard let cases = caseMember.decl.as(EnumCaseDeclSyntax.self) else { continue }
                for element in cases.elements {
                    guard element.parameterClause == nil else {
                        throw FieldError(node: Syntax(element), message: "CodingKeys cases cannot have associated values")
                    }
                    let name = element.name.text.filter { $0 != "`" }
                    if let raw = element.rawValue?.value {
                        guard let literal = raw.as(StringLiteralExprSyntax.self),
                              let text = literal.representedLiteralValue else {
                            throw FieldError(node: Syntax(raw), message: "@BinaryCodable needs CodingKeys raw values to be plain string literals")
                        }
                        result[name] = text
                    } else {
                        result[name] = name
                    }
                }
            }
            return result
        }
        return nil
    }

    /// Custom `encode(to:)` / `init(from:)` would write other bytes than the generated code.
    static func refuseCustomCoding(_ decl: StructDeclSyntax) throws {
        for member in decl.memberBlock.members {
            if let function = member.decl.as(FunctionDeclSyntax.self), function.name.text == "encode",
               function.signature.parameterClause.parameters.first?.firstName.text == "to" {
                throw FieldError(node: Syntax(function.name), message: "@BinaryCodable cannot be combined with a custom encode(to:); remove one of them")
            }
            if let initializer = member.decl.as(InitializerDeclSyntax.self),
               initializer.signature.parameterClause.parameters.first?.firstName.text == "from" {
                throw FieldError(node: Syntax(initializer), message: "@BinaryCodable cannot be combined with a custom init(from:); remove one of them")
            }
        }
    }
}
#endif
