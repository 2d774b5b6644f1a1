#if Macros
import SwiftCompilerPlugin
import SwiftSyntaxMacros

/// The compiler plugin's entry point.
@main
struct DepotMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [BinaryCodableMacro.self]
}
#else
/// Built without the `Macros` trait: an empty plugin (no macro refers to it).
@main
enum DepotMacrosPluginWithoutTrait {
    static func main() {}
}
#endif
