import Foundation
import Testing
import DepotTestSupport
@testable import Depot
@testable import DepotCore
import DepotLMDB

/// Models the kit suites share.
struct KitPerson: Document, Equatable {
    static var collection: String { "Person" }
    var id: String
    var firstname: String
    var age: Int
}

struct Settings: Codable, Sendable, Equatable {
    var volume: Int
    var name: String
}
