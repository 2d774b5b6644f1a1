/// A key of a ``KeyValueStore``'s cache: equal to another, hashed and ordered by its UTF-8 bytes,
/// as keys are stored on disk. Swift's `String` compares by canonical equivalence, under which
/// two keys stored apart ("é" precomposed and "e" + U+0301) would share one cache entry and read
/// each other's value.
struct KeyValueCacheKey: Hashable, Comparable, Sendable {
    /// The key as the caller spelled it.
    let text: String

    init(_ text: String) { self.text = text }

    static func == (a: Self, b: Self) -> Bool { a.text.utf8.elementsEqual(b.text.utf8) }

    static func < (a: Self, b: Self) -> Bool { a.text.utf8.lexicographicallyPrecedes(b.text.utf8) }

    func hash(into hasher: inout Hasher) {
        var text = text
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}
