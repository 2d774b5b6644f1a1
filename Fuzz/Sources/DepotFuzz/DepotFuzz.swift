import Depot
import Foundation

struct FuzzAddress: Codable { var street: String; var zip: Int16?; var tags: [String] }
struct FuzzPerson: Codable {
    var id: UUID
    var name: String
    var age: UInt8
    var born: Date
    var balance: Decimal
    var home: FuzzAddress?
    var scores: [Int: Double]
    var blob: Data
    var meta: DocumentValue
}
indirect enum FuzzTree: Codable { case leaf(Int), node([FuzzTree]) }

/// A generated-codec type (what `@BinaryCodable` emits, written out): its field table's fast path
/// loads 8 bytes at a time, so address sanitizer checks every read stays inside the input.
struct FuzzGenerated: Codable, BinaryCodableDocument {
    var id: String
    var a_longer_key: String
    var n: Int
    var tags: [String]
    var flag: Bool?
    var home: FuzzAddress?
    static let table = BinaryFieldTable(["id", "a_longer_key", "n", "tags", "flag", "home"])

    init(binaryRecord reader: inout BinaryRecordReader) throws {
        var id: String?, long: String?, n: Int?, tags: [String]?, flag: Bool?, home: FuzzAddress?
        while let field = try reader.nextField(in: Self.table) {
            switch field {
            case 0: id = try reader.decode(String.self)
            case 1: long = try reader.decode(String.self)
            case 2: n = try reader.decode(Int.self)
            case 3: tags = try reader.decode([String].self)
            case 4: flag = try reader.decodeIfPresent(Bool.self)
            case 5: home = try reader.decodeIfPresent(FuzzAddress.self)
            default: break
            }
        }
        guard let id, let long, let n, let tags else { throw reader.missingField("id") }
        (self.id, a_longer_key, self.n, self.tags, self.flag, self.home) = (id, long, n, tags, flag, home)
    }

    func encodeBinary(into writer: inout BinaryRecordWriter) throws {
        try writer.encode(id, forKey: "id")
        try writer.encode(a_longer_key, forKey: "a_longer_key")
        try writer.encode(n, forKey: "n")
        try writer.encode(tags, forKey: "tags")
        try writer.encodeIfPresent(flag, forKey: "flag")
        try writer.encodeIfPresent(home, forKey: "home")
    }
}

/// libFuzzer's driver (LLVM 11 and later), given our callback.
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
                         _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Int32

@main
struct DepotFuzz {
    static func main() {
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, { data, size in fuzz(data, size) }))
    }
}

/// One input: every decoder entry point must decode it or throw, never crash.
func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    let decoder = BinaryDecoder()
    _ = try? decoder.decode(FuzzPerson.self, from: bytes)
    _ = try? decoder.decode([FuzzTree].self, from: bytes)
    _ = try? decoder.decode([String: DocumentValue].self, from: bytes)
    // The generated path (field table, scratch writer) never reads or writes outside its memory,
    // and what it decodes it writes back as the Codable path would.
    _ = try? decoder.decode(FuzzGenerated.self, from: bytes)
    if let generated = try? decoder.decodeGenerated(FuzzGenerated.self, from: bytes) {
        let encoder = BinaryEncoder()
        guard let a = try? encoder.encodeGenerated(generated), let b = try? encoder.encode(generated), a == b else {
            fatalError("generated and Codable encoders disagree")
        }
    }
    _ = try? DocumentValue(binary: bytes)
    _ = try? DocumentValue(json: Data(bytes))
    return 0
}

/// The symbol libFuzzer's runtime expects (also used when its own main runs the target).
@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 { fuzz(data, size) }
