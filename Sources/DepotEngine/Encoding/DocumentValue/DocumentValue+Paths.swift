/// Dotted paths of object fields (`"address.city"`): what delete rules, field defaults,
/// migrations and seeding read and change in a schemaless document.
extension DocumentValue {
    /// The value at a dotted path of object fields, or nil.
    package func value(atPath path: String) -> DocumentValue? {
        var current = self
        for part in path.split(separator: ".", omittingEmptySubsequences: false) {
            guard let next = current[String(part)] else { return nil }
            current = next
        }
        return current
    }

    /// Sets the value at a dotted path, creating intermediate objects.
    package mutating func setValue(_ value: DocumentValue, atPath path: String) {
        let parts = path.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        var fields: [Field]
        if case .object(let existing) = self { fields = existing } else { fields = [] }
        let name = parts[0]
        let index = fields.firstIndex { $0.key == name }
        var child = index.map { fields[$0].value } ?? .object([])
        if parts.count == 2 { child.setValue(value, atPath: parts[1]) } else { child = value }
        if let index { fields[index].value = child } else { fields.append(Field(name, child)) }
        self = .object(fields)
    }

    /// Removes the value at a dotted path (nothing when absent).
    package mutating func removeValue(atPath path: String) {
        guard case .object(var fields) = self else { return }
        let parts = path.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        guard let index = fields.firstIndex(where: { $0.key == parts[0] }) else { return }
        if parts.count == 2 { fields[index].value.removeValue(atPath: parts[1]) } else { fields.remove(at: index) }
        self = .object(fields)
    }
}
