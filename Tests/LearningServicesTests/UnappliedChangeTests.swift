import Journal
import Synchronization
@testable import LearningServices
import LearningServicesTestSupport
import Testing

/// A state whose decoder refuses every value, as if a service wrote a value its own decoder
/// cannot read: the one way a journaled change could miss the live state.
private struct RefusingState: LedgeredState {
    var ledger = RequestLedger(service: "refusing")

    mutating func apply(_ change: JournalChange) throws(UndecodableValue) {
        throw UndecodableValue(change, .malformed("refused"))
    }

    func snapshot() -> [JournalChange] { [] }
}

/// A journaled change the live state could not take is reported, not dropped: the write gets an
/// error reply, and every later capture throws, so no compaction snapshots a state without it.
@Suite struct UnappliedChangeTests {
    /// With and without a plan that performs its changes itself (`WritePlan.perform`).
    @Test(arguments: [false, true])
    func aChangeTheStateRefusesFailsTheWriteAndEveryLaterCapture(performedByThePlan: Bool) throws {
        let log = InMemoryChangeLog()
        let core = ServiceCore(state: RefusingState(), log: log)
        let request = try Request(Array(#"{"op":"put","learner":"ada"}"#.utf8))
        let replies = Replies()
        let change = JournalChange.put("things", key: "ada/1", value: Array("{}".utf8))
        core.write(request, learner: "ada", plan: { _ throws(ServiceError) in
            WritePlan<RefusingState, Never>(
                reply: Reply.success(serialized: Array("{}".utf8)), changes: [change], event: nil,
                perform: performedByThePlan ? { (state) throws(UndecodableValue) in try state.apply(change) } : nil)
        }) { replies.append($0.reply) }
        let reply = String(decoding: try #require(replies.first), as: UTF8.self)
        #expect(reply.contains(#""code":"internal""#) && reply.contains("things/ada/1"), "\(reply)")
        #expect(log.changes.count == 1, "the change was journaled")
        #expect(throws: UndecodableValue(collection: "things", key: "ada/1", .malformed("refused"))) {
            _ = try core.capture { 1 }
        }
    }
}

/// The replies a test's writes produced.
private final class Replies: Sendable {
    private let replies = Mutex<[[UInt8]]>([])
    func append(_ reply: [UInt8]) { replies.withLock { $0.append(reply) } }
    var first: [UInt8]? { replies.withLock { $0.first } }
}
