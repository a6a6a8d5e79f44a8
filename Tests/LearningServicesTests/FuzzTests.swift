import Catalog
import JSON
import LearningServices
import LearningServicesTestSupport
import Testing

/// Mangled requests — truncated, with bytes flipped, inserted or dropped — always get a
/// well-formed reply and never stop the service.
@Suite struct FuzzTests {
    static let seeds = [
        #"{"op":"create","learner":"ada","title":"Dune","author":"Frank Herbert","genre":"Fantasy","rating":5,"request_id":"r1"}"#,
        #"{"op":"update","learner":"ada","id":"00000000-0000-4000-8000-000000000001","rating":4,"expected_version":1}"#,
        #"{"op":"list","learner":"ada","sort":"title","order":"desc","limit":2,"min_rating":3}"#,
        #"{"op":"search","query":"café statistics","limit":3}"#,
        #"{"op":"list_courses","limit":2,"category":"Algebra"}"#,
        #"{"op":"submit_quiz","learner":"ada","course":"1","answers":[2,0,1]}"#,
        #"{"op":"save_position","learner":"ada","course":"1","lesson":"3","position_seconds":12.5}"#,
    ]

    @Test func mangledRequestsAlwaysGetAWellFormedReply() throws {
        let store = CatalogStore(try Catalog.sample())
        let services: [any LearningService] = [
            BooksService(log: InMemoryChangeLog(), environment: deterministicEnvironment()),
            CatalogService(store: store),
            ProgressService(catalog: store, log: InMemoryChangeLog(), environment: deterministicEnvironment()),
        ]
        var state: UInt64 = 0x5EED
        func random(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        for round in 0..<6_000 {
            var bytes = Array(Self.seeds[round % Self.seeds.count].utf8)
            for _ in 0...random(3) {
                guard !bytes.isEmpty else { break }
                switch random(4) {
                case 0: bytes[random(bytes.count)] = UInt8(truncatingIfNeeded: random(256))
                case 1: bytes.insert(Array(#"{}[],:"0\é"#.utf8)[random(11)], at: random(bytes.count))
                case 2: bytes.remove(at: random(bytes.count))
                default: bytes.removeLast(random(bytes.count))
                }
            }
            for service in services {
                let reply = try JSONParser().parse(service.handle(bytes))
                switch reply["ok"] {
                case true?: #expect(reply["result"] != nil)
                case false?: #expect(errorCode(reply).flatMap(ServiceError.Code.init(rawValue:)) != nil)
                default: Issue.record("reply without ok: \(reply)")
                }
            }
        }
    }
}
