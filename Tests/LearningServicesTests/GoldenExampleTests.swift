import Access
import Catalog
import Foundation
import JSON
import LearningServices
import LearningServicesTestSupport
import Testing

/// The request/reply pairs of `protocol/examples`, replayed against fresh services with the
/// sample catalog, a fixed clock and numbered UUIDs; every reply must match exactly.
/// An exchange may name its `caller` (`{"role": …, "name": …, "learners": […]}`, as a key's
/// certificate would); without one the caller is unverified, as with security off.
/// `LYCEUM_REGENERATE_EXAMPLES=1 swift test --filter GoldenExampleTests` rewrites the replies.
@Suite struct GoldenExampleTests {
    static let protocolDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("protocol")

    static var exampleFiles: [String] {
        let examples = protocolDirectory.appendingPathComponent("examples").path
        return (FileManager.default.subpaths(atPath: examples) ?? []).filter { $0.hasSuffix(".json") }.sorted()
    }

    @Test func everyOperationHasAnExampleAndSchemas() {
        let operations = [
            "books": ["create", "get", "update", "delete", "list"],
            "catalog": ["list_courses", "get_course", "get_lesson", "get_quiz", "list_categories", "search"],
            "progress": ["mark_watched", "mark_unwatched", "save_position", "begin_course", "open_lesson", "submit_quiz", "get", "list", "course_stats"],
        ]
        for (service, ops) in operations {
            for op in ops {
                #expect(Self.exampleFiles.contains("\(service)/\(op).json"), "no example for \(service).\(op)")
                for kind in ["request", "result"] {
                    let schema = Self.protocolDirectory.appendingPathComponent("schemas/\(service).\(op).\(kind).json")
                    #expect(FileManager.default.fileExists(atPath: schema.path), "no \(kind) schema for \(service).\(op)")
                }
            }
        }
    }

    @Test(arguments: exampleFiles)
    func theServiceAnswersTheExampleExactly(file: String) throws {
        let url = Self.protocolDirectory.appendingPathComponent("examples").appendingPathComponent(file)
        let document = try JSONParser().parse(Array(try Data(contentsOf: url)))
        guard case .array(let exchanges)? = document["exchanges"], !exchanges.isEmpty else {
            Issue.record("\(file) has no exchanges")
            return
        }
        let service = try Self.service(for: String(file.prefix { $0 != "/" }))
        var regenerated: [JSONValue] = []
        for (index, exchange) in exchanges.enumerated() {
            let frame: [UInt8]
            if case .string(let text)? = exchange["request_text"] {
                frame = Array(text.utf8)
            } else {
                frame = try #require(exchange["request"], "\(file) exchange \(index) has no request").serialized()
            }
            let reply = try JSONParser().parse(service.handle(frame, caller: try Self.caller(of: exchange)))
            regenerated.append(Self.replacingReply(of: exchange, with: reply))
            if ProcessInfo.processInfo.environment["LYCEUM_REGENERATE_EXAMPLES"] == nil {
                #expect(reply == exchange["reply"], "\(file) exchange \(index)")
            }
        }
        if ProcessInfo.processInfo.environment["LYCEUM_REGENERATE_EXAMPLES"] != nil {
            let updated: JSONValue = ["description": document["description"] ?? .null, "exchanges": .array(regenerated)]
            try Data(updated.serialized()).write(to: url)
        }
    }

    @Test(arguments: exampleFiles)
    func theExampleConformsToTheSchemas(file: String) throws {
        let validator = try SchemaValidator(directory: Self.protocolDirectory.appendingPathComponent("schemas"))
        let url = Self.protocolDirectory.appendingPathComponent("examples").appendingPathComponent(file)
        let document = try JSONParser().parse(Array(try Data(contentsOf: url)))
        guard case .array(let exchanges)? = document["exchanges"] else { return }
        let directory = String(file.prefix { $0 != "/" })
        let service = directory == "envelope" ? "books" : directory
        for exchange in exchanges {
            let reply = try #require(exchange["reply"])
            if reply["ok"] == true, let request = exchange["request"], case .string(let op)? = request["op"] {
                #expect(validator.problems(request, against: "\(service).\(op).request.json") == [], "\(file): \(op) request")
                #expect(validator.problems(reply["result"] ?? .null, against: "\(service).\(op).result.json") == [], "\(file): \(op) result")
            } else if reply["ok"] == false {
                #expect(validator.problems(reply, matching: ["$ref": "common.json#/$defs/error_reply"]) == [], "\(file): error reply")
            }
        }
    }

    @Test func theValidatorCatchesDeviations() throws {
        let validator = try SchemaValidator(directory: Self.protocolDirectory.appendingPathComponent("schemas"))
        let problems = validator.problems(["book": ["id": 1, "rating": 9, "extra": true]], against: "books.get.result.json")
        #expect(problems.contains("$.book.id: number is not [\"string\"]"))
        #expect(problems.contains("$.book.rating: above 5.0"))
        #expect(problems.contains("$.book.extra: is not allowed"))
        #expect(problems.contains("$.book.title: is required"))
        #expect(validator.problems(["op": "list", "learner": "a b"], against: "books.list.request.json").count == 1)
    }

    static func service(for name: String) throws -> any LearningService {
        let environment = deterministicEnvironment()
        let store = CatalogStore(try Catalog.sample())
        switch name {
        case "catalog": return CatalogService(store: store)
        case "progress": return ProgressService(catalog: store, log: InMemoryChangeLog(), environment: environment)
        default: return BooksService(log: InMemoryChangeLog(), environment: environment)
        }
    }

    /// The `caller` an exchange names, or `Caller.unverified`.
    static func caller(of exchange: JSONValue) throws -> Caller {
        guard let caller = exchange["caller"] else { return .unverified }
        guard case .string(let roleName)? = caller["role"], let role = Role(rawValue: roleName) else {
            throw ExampleError("an exchange's caller has no known role")
        }
        var learners: Set<String> = []
        if case .array(let items)? = caller["learners"] {
            for item in items { if case .string(let learner) = item { learners.insert(learner) } }
        }
        let name = if case .string(let name)? = caller["name"] { name } else { roleName }
        return .authenticated(Principal(name: name, role: role, learners: learners))
    }

    struct ExampleError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    static func replacingReply(of exchange: JSONValue, with reply: JSONValue) -> JSONValue {
        guard case .object(let object) = exchange else { return exchange }
        var updated = JSONObject()
        for member in object where member.key != "reply" { updated.append(member.key, member.value) }
        updated.append("reply", reply)
        return .object(updated)
    }
}
