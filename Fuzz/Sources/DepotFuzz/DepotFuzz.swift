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
    _ = try? DocumentValue(binary: bytes)
    _ = try? DocumentValue(json: Data(bytes))
    return 0
}

/// The symbol libFuzzer's runtime expects (also used when its own main runs the target).
@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 { fuzz(data, size) }
