/// The field names a generated decoder looks for, prepared once per type for fast matching
/// (what `@BinaryCodable` emits as a `static let`; see ``BinaryRecordReader/nextField(in:)-(BinaryFieldTable)``).
///
/// Besides the names, it keeps each short name's stored key — header byte and UTF-8, up to 8
/// bytes — as one word, so that the field stored where it is expected (records are written in
/// declaration order) is recognized with one load and one compare.
///
/// A class, so that passing it per field costs no more than passing one reference; `Sendable`
/// because it is immutable after `init`.
public final class BinaryFieldTable: Sendable {
    /// The names, in declaration order.
    public let names: [StaticString]
    /// Per name: its stored key as a word (native byte order), the mask of the key's bytes, and
    /// the key's stored length (0 when longer than 8 bytes: matched the general way).
    @usableFromInline package let entries: ContiguousArray<Entry>

    @usableFromInline
    package struct Entry: Sendable {
        @usableFromInline package var word: UInt64 = 0
        @usableFromInline package var mask: UInt64 = 0
        @usableFromInline package var length = 0
        /// The name itself (the reader's current key when this entry matches).
        @usableFromInline package var name: StaticString
    }

    /// Prepares `names` (the stored keys, in declaration order).
    public init(_ names: [StaticString]) {
        self.names = names
        entries = ContiguousArray(names.map(Self.entry))
    }

    private static func entry(_ name: StaticString) -> Entry {
        var entry = Entry(name: name)
        name.withUTF8Buffer { utf8 in
            let header = utf8.count << 1
            guard header < 0x80, utf8.count + 1 <= 8 else { return }
            var key = [UInt8(header)] + Array(utf8)
            let length = key.count
            var mask = [UInt8](repeating: 0xFF, count: length)
            key += [UInt8](repeating: 0, count: 8 - length)
            mask += [UInt8](repeating: 0, count: 8 - length)
            entry.word = key.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
            entry.mask = mask.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
            entry.length = length
        }
        return entry
    }
}
