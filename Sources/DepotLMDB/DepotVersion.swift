/// The version of the Depot libraries and the `depot` tool.
///
/// ```swift
/// print(DepotVersion.current)   // "0.4.0"
/// ```
///
/// Depot follows [Semantic Versioning](https://semver.org): until 1.0.0, a minor release may
/// change the API; the storage format is only ever changed with a migration (see CHANGELOG.md).
/// The type is not named `Depot`: a type with its module's name would make module-qualified
/// names such as `Depot.Store` unusable in client code.
public enum DepotVersion {
    /// The version as text, `MAJOR.MINOR.PATCH`.
    public static let current = "0.4.0"
    /// The major version.
    public static let major = 0
    /// The minor version.
    public static let minor = 4
    /// The patch version.
    public static let patch = 0
}
