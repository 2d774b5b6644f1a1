import Foundation

extension BinaryEncoderImpl {
    /// ``encodeFast(_:)`` past its four commonest types: the other types written natively
    /// (false for any other type, whose `encode(to:)` runs).
    func encodeFastRare<T: Encodable>(_ value: T) -> Bool {
        let t = T.self
        if t == [String].self {
            BinaryWriter.stringArray(unsafeBitCast(value, to: [String].self), &buffer)
        } else if t == [Int].self {
            let v = unsafeBitCast(value, to: [Int].self)
            let s = BinaryWriter.beginContainer(BinaryTag.array, &buffer)
            for e in v { BinaryWriter.signed(Int64(e), &buffer) }
            BinaryWriter.endContainer(start: s, count: v.count, &buffer)
        } else if t == [Double].self {
            let v = unsafeBitCast(value, to: [Double].self)
            let s = BinaryWriter.beginContainer(BinaryTag.array, &buffer)
            for e in v { BinaryWriter.double(e, &buffer) }
            BinaryWriter.endContainer(start: s, count: v.count, &buffer)
        } else if t == [UInt8].self {
            unsafeBitCast(value, to: [UInt8].self).withUnsafeBytes { BinaryWriter.bytes($0, &buffer) }
        } else if t == Date.self {
            BinaryWriter.date(unsafeBitCast(value, to: Date.self), &buffer)
        } else if t == Data.self {
            unsafeBitCast(value, to: Data.self).withUnsafeBytes { BinaryWriter.bytes($0, &buffer) }
        } else if t == UUID.self {
            BinaryWriter.uuid(unsafeBitCast(value, to: UUID.self), &buffer)
        } else if t == URL.self {
            BinaryWriter.string(unsafeBitCast(value, to: URL.self).absoluteString, tag: BinaryTag.url, &buffer)
        } else if t == Decimal.self {
            BinaryWriter.string(unsafeBitCast(value, to: Decimal.self).description, tag: BinaryTag.decimal, &buffer)
        } else if t == DocumentValue.self {
            unsafeBitCast(value, to: DocumentValue.self).write(into: &buffer)
        } else if t == Float.self {
            BinaryWriter.float(unsafeBitCast(value, to: Float.self), &buffer)
        } else if t == Int64.self {
            BinaryWriter.signed(unsafeBitCast(value, to: Int64.self), &buffer)
        } else if t == Int32.self {
            BinaryWriter.signed(Int64(unsafeBitCast(value, to: Int32.self)), &buffer)
        } else if t == Int16.self {
            BinaryWriter.signed(Int64(unsafeBitCast(value, to: Int16.self)), &buffer)
        } else if t == Int8.self {
            BinaryWriter.signed(Int64(unsafeBitCast(value, to: Int8.self)), &buffer)
        } else if t == UInt64.self {
            BinaryWriter.unsigned(unsafeBitCast(value, to: UInt64.self), &buffer)
        } else if t == UInt.self {
            BinaryWriter.unsigned(UInt64(unsafeBitCast(value, to: UInt.self)), &buffer)
        } else if t == UInt32.self {
            BinaryWriter.unsigned(UInt64(unsafeBitCast(value, to: UInt32.self)), &buffer)
        } else if t == UInt16.self {
            BinaryWriter.unsigned(UInt64(unsafeBitCast(value, to: UInt16.self)), &buffer)
        } else if t == UInt8.self {
            BinaryWriter.unsigned(UInt64(unsafeBitCast(value, to: UInt8.self)), &buffer)
        } else {
            return false
        }
        return true
    }
}
