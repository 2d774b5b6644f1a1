import Foundation

/// How dates look outside the store — in exported JSON and in seed files (GarageStorage's date
/// encoding strategies). Inside the store a date is always kept exactly (a Double of seconds), so
/// changing the strategy never changes stored data.
///
/// Chosen per store (`StoreOptions/dateStrategy`), per document type
/// (``Document/dateStrategy``, which wins for its collection), and for one call (the
/// `dateStrategy:` parameter of ``ExportedDocument/jsonLine(dateStrategy:)`` and
/// ``SeedOptions/dateStrategy``).
public enum DateStrategy: Sendable, Hashable {
    /// ISO 8601 in UTC (`2026-11-23T14:58:35Z`, fractional seconds when present). The default.
    case iso8601
    /// Seconds since 1970-01-01 (a number).
    case secondsSince1970
    /// Milliseconds since 1970-01-01 (a number).
    case millisecondsSince1970
    /// Seconds since 2001-01-01, Foundation's reference date (a number).
    case secondsSinceReferenceDate
    /// A `DateFormatter` format (`"yyyy-MM-dd"`), in UTC with the POSIX locale.
    case formatted(String)

    /// The external form of `date`.
    public func value(for date: Date) -> DocumentValue {
        switch self {
        case .iso8601: return .string(DocumentValue.formatISO8601(date))
        case .secondsSince1970: return .double(date.timeIntervalSince1970)
        case .millisecondsSince1970:
            let ms = date.timeIntervalSince1970 * 1000
            return ms.rounded() == ms && abs(ms) < 9e15 ? .int(Int64(ms)) : .double(ms)
        case .secondsSinceReferenceDate: return .double(date.timeIntervalSinceReferenceDate)
        case .formatted(let format):
            if let word = DocumentValue.nonFiniteWord(date.timeIntervalSinceReferenceDate) { return .string(word) }
            return .string(Self.formatter(format).string(from: date))
        }
    }

    /// The date an external value stands for, or nil when it is not one in this strategy.
    public func date(from value: DocumentValue) -> Date? {
        switch (self, value) {
        case (_, .date(let d)): return d
        case (.iso8601, .string(let s)): return DocumentValue.parseISO8601(s)
        case (.secondsSince1970, _): return Self.number(value).map { Date(timeIntervalSince1970: $0) }
        case (.millisecondsSince1970, _): return Self.number(value).map { Date(timeIntervalSince1970: $0 / 1000) }
        case (.secondsSinceReferenceDate, _): return Self.number(value).map { Date(timeIntervalSinceReferenceDate: $0) }
        case (.formatted(let format), .string(let s)): return Self.formatter(format).date(from: s)
        default: return nil
        }
    }

    private static func number(_ value: DocumentValue) -> Double? {
        switch value {
        case .int(let i): return Double(i)
        case .uint(let u): return Double(u)
        case .double(let d) where d.isFinite: return d
        default: return nil
        }
    }

    private static func formatter(_ format: String) -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = format
        return formatter
    }
}

extension DocumentValue {
    /// This value with every date rendered by `strategy` (for JSON output).
    public func renderingDates(_ strategy: DateStrategy) -> DocumentValue {
        switch self {
        case .date(let d): return strategy.value(for: d)
        case .array(let items): return .array(items.map { $0.renderingDates(strategy) })
        case .object(let fields): return .object(fields.map { Field($0.key, $0.value.renderingDates(strategy)) })
        default: return self
        }
    }

    /// This value with the scalars at the positions where `typed` holds a date replaced by that
    /// date, read the way `strategy` writes dates: a number is seconds or milliseconds as the
    /// strategy says (the decoder alone reads every number as seconds since 2001), a string the
    /// strategy's form (else the ISO 8601 date the decoder read). A number where `strategy`
    /// writes strings is left as it is and its JSON path (from `path`) put in `mismatch`.
    package func takingDates(from typed: DocumentValue, strategy: DateStrategy, path: String = "$", mismatch: inout String?) -> DocumentValue {
        switch (self, typed) {
        case (_, .date(let d)):
            switch self {
            case .string: return .date(strategy.date(from: self) ?? d)
            case .int, .uint, .double:
                if let converted = strategy.date(from: self) { return .date(converted) }
                if mismatch == nil { mismatch = path }
                return self
            default: return self
            }
        case (.object(let fields), .object(let typedFields)):
            return .object(fields.map { field in
                guard let match = typedFields.first(where: { $0.key == field.key }) else { return field }
                return Field(field.key, field.value.takingDates(from: match.value, strategy: strategy,
                                                                path: JSONParser.member(path, field.key), mismatch: &mismatch))
            })
        case (.array(let items), .array(let typedItems)) where items.count == typedItems.count:
            return .array(zip(items, typedItems).enumerated().map { i, pair in
                pair.0.takingDates(from: pair.1, strategy: strategy, path: "\(path)[\(i)]", mismatch: &mismatch)
            })
        default:
            return self
        }
    }
}
