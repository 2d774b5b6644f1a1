import Foundation

/// Turns Swift values into the bytes LMDB stores, and back (like Rust heed's `BytesEncode`/`BytesDecode`).
///
/// Encoding hands the bytes to a closure so that no intermediate buffer is allocated: integers
/// are encoded on the stack, strings lend their UTF-8 storage. Decoding reads straight from the
/// memory map.
public protocol LMDBCodec {
    /// The Swift type of the values.
    associatedtype Value

    /// Calls `body` with the bytes of `value`. The buffer is valid only during the call.
    static func withBytes<R>(of value: Value, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R

    /// Makes a value from bytes read from the database (valid only during the call).
    static func decode(_ bytes: UnsafeRawBufferPointer) throws -> Value
}

/// The error a codec throws for bytes it cannot decode.
public struct CodecError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was wrong.
    public let message: String
    /// Creates a codec error.
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Raw bytes, stored as they are.
public enum BytesCodec: LMDBCodec {
    @inlinable
    public static func withBytes<R>(of value: [UInt8], _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try value.withUnsafeBytes { try body($0) }
    }
    @inlinable
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws -> [UInt8] { [UInt8](bytes) }
}

/// `Data`, stored as its bytes.
public enum DataCodec: LMDBCodec {
    @inlinable
    public static func withBytes<R>(of value: Data, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try value.withUnsafeBytes { try body($0) }
    }
    @inlinable
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws -> Data { Data(bytes) }
}

/// A `String`, stored as exactly its UTF-8 bytes (no terminator, no header), so byte order is
/// the order of Unicode scalar values.
public enum StringCodec: LMDBCodec {
    @inlinable
    public static func withBytes<R>(of value: String, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var value = value
        return try value.withUTF8 { try body(UnsafeRawBufferPointer($0)) }
    }
    @inlinable
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws -> String {
        String(decoding: bytes, as: UTF8.self)
    }
}

/// A fixed-width integer stored big-endian, so that byte order equals numeric order.
/// Signed integers have their sign bit flipped, so negative numbers sort before positive ones.
public enum BigEndian<T: FixedWidthInteger>: LMDBCodec {
    @inlinable @inline(__always)
    static func orderPreserving(_ value: T) -> T {
        T.isSigned ? value ^ (1 << (T.bitWidth - 1)) : value
    }
    @inlinable
    public static func withBytes<R>(of value: T, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var stored = orderPreserving(value).bigEndian
        return try withUnsafeBytes(of: &stored) { try body($0) }
    }
    @inlinable
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws -> T {
        guard bytes.count == MemoryLayout<T>.size else {
            throw CodecError("expected \(MemoryLayout<T>.size) bytes for \(T.self), found \(bytes.count)")
        }
        return orderPreserving(T(bigEndian: bytes.loadUnaligned(as: T.self)))
    }
}

/// A fixed-width unsigned integer in native byte order, for ``DatabaseFlags/integerKey`` databases
/// (LMDB then compares keys as numbers). Use `UInt32` or `UInt` (`size_t`), as LMDB requires.
public enum NativeEndian<T: FixedWidthInteger & UnsignedInteger>: LMDBCodec {
    @inlinable
    public static func withBytes<R>(of value: T, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var stored = value
        return try withUnsafeBytes(of: &stored) { try body($0) }
    }
    @inlinable
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws -> T {
        guard bytes.count == MemoryLayout<T>.size else {
            throw CodecError("expected \(MemoryLayout<T>.size) bytes for \(T.self), found \(bytes.count)")
        }
        return bytes.loadUnaligned(as: T.self)
    }
}

/// A `UUID`, stored as its 16 bytes.
public enum UUIDCodec: LMDBCodec {
    @inlinable
    public static func withBytes<R>(of value: UUID, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var raw = value.uuid
        return try withUnsafeBytes(of: &raw) { try body($0) }
    }
    @inlinable
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws -> UUID {
        guard bytes.count == 16 else { throw CodecError("expected 16 bytes for a UUID, found \(bytes.count)") }
        return UUID(uuid: bytes.loadUnaligned(as: uuid_t.self))
    }
}

/// Bytes lent straight from and to LMDB, without copying: encoding passes the buffer through,
/// decoding returns a pointer into the memory map that is valid only until the transaction
/// ends or the next write in it. For storage adapters and hot paths that copy what they keep.
public enum RawBytesCodec: LMDBCodec {
    @inlinable
    public static func withBytes<R>(of value: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(value)
    }
    @inlinable
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer { bytes }
}
