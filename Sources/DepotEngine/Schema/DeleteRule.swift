/// What happens to the documents that reference a deleted document through a lazy
/// `Reference` field (Core Data's delete rules). Without a rule — the default — deleting never
/// follows references.
public enum DeleteRule: String, Sendable, Hashable {
    /// The referencing field is set to null (optional references only).
    case nullify
    /// The referencing documents are deleted too (and their own rules applied).
    case cascade
    /// The delete fails with `DepotError.Code/deleteDenied` while any document references it.
    case deny
}

/// A registered rule: documents of `source` whose `field` references a document of `target`;
/// or, `owning`, a cascade from a deleted `source` (== `target`) to the documents its `field`
/// references.
@usableFromInline
package struct RegisteredDeleteRule: Sendable, Hashable {
    package var rule: DeleteRule
    package var source: String
    package var field: String
    package var target: String
    package var owning = false
    /// Whether every stored document of `source` has `field` (a rule on a non-optional
    /// property): one without it means the field path is not the property's coded name, which
    /// the rule reports instead of silently matching nothing.
    package var fieldRequired = false

    /// A rule from documents of `source` whose `field` references a document of `target`.
    package init(rule: DeleteRule, source: String, field: String, target: String, owning: Bool = false, fieldRequired: Bool = false) {
        self.rule = rule
        self.source = source
        self.field = field
        self.target = target
        self.owning = owning
        self.fieldRequired = fieldRequired
    }
}
