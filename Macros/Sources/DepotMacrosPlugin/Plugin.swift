import SwiftCompilerPlugin
import SwiftSyntaxMacros

/// The compiler plugin's entry point.
@main
struct DepotMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [BinaryCodableMacro.self]
}
