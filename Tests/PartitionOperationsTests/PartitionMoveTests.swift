import Foundation
import JSON
import Journal
import LearningServices
import LyceumTestSupport
import Majordomo
import LyceumLifecycle
@testable import PartitionOperations
@testable import Partitions
import ZeroMQ
import Synchronization
import Testing
@testable import LyceumServer

/// A node's partitions as real journal directories under `DATA/<service>/p<N>`, opened and
/// closed the way a worker host does, for the move logic to release and serve.
private final class JournalCustody: PartitionCustody, @unchecked Sendable {
    let node: String
    let data: String
    private let open = Mutex<[String: Journal]>([:])

    init(node: String, data: String) {
        self.node = node
        self.data = data
    }

    func directory(service: String, partition: Int) -> String { "\(data)/\(service)/p\(partition)" }

    func isServing(service: String, partition: Int) -> Bool {
        open.withLock { $0[directory(service: service, partition: partition)] != nil }
    }

    /// Admits every partition: its own budget is none.
    func admit(service: String, partition: Int) throws {}

    func release(service: String, partition: Int) throws {
        guard let journal = open.withLock({ $0.removeValue(forKey: directory(service: service, partition: partition)) }) else {
            throw ServiceError(.notFound, "\(service).p\(partition) is not served by \(node)")
        }
        journal.close()
    }

    func handOff(service: String, partition: Int, to successor: String) throws { throw ServiceError(.badRequest, "not replicated") }
    func serve(service: String, partition: Int) throws {
        let path = directory(service: service, partition: partition)
        guard open.withLock({ $0[path] == nil }) else { return }
        var state = KeyedJournalState()
        let journal = try Journal.open(directory: path, options: JournalOptions(durability: .none), state: &state)
        open.withLock { $0[path] = journal }
    }

    var served: [String] { open.withLock { $0.keys.map { ($0 as NSString).lastPathComponent }.sorted() } }

    /// Appends `count` records to a served partition.
    func write(_ count: Int, service: String = "books", partition: Int) throws {
        let journal = try #require(open.withLock { $0[directory(service: service, partition: partition)] })
        for number in 0..<count {
            _ = try journal.append([.put("books", key: "b\(number)", value: Array("{\"n\":\(number)}".utf8))]).waitUntilDurable()
        }
    }

    func close() { open.withLock { for journal in $0.values { journal.close() } } }
}

/// Two nodes whose node services reach each other through `call`, with the request and reply
/// frames encoded and parsed as on the wire; `failAt` makes the call to the target fail at the
/// named request (`begin`, `chunk`, `finish`, `adopt`).
private final class TwoNodes: @unchecked Sendable {
    let root: TemporaryDirectory
    let source: JournalCustody
    let target: JournalCustody
    let failAt = Mutex<String?>(nil)
    let seen = Mutex<[String]>([])
    private(set) var services: [String: PartitionMoveOps] = [:]

    init() throws {
        root = try TemporaryDirectory()
        source = JournalCustody(node: "w1", data: root.path + "/w1")
        target = JournalCustody(node: "w2", data: root.path + "/w2")
        try FileManager.default.createDirectory(atPath: target.data + "/books", withIntermediateDirectories: true)
        for custody in [source, target] {
            services[NodeService.namePrefix + custody.node] = PartitionMoveOps(custody: custody) { [unowned self] service, frames in
                let step = Self.step(frames[0])
                seen.withLock { $0.append(step) }
                if failAt.withLock({ $0 == step }) { throw ServiceError(.unavailable, "the test cut the link at \(step)") }
                guard let node = services[service] else { throw ServiceError(.unavailable, "service_unknown: \(service)") }
                return [node.answer(frames)]
            }
        }
    }

    deinit {
        source.close()
        target.close()
        root.remove()
    }

    private static func step(_ frame: [UInt8]) -> String {
        guard case .object(let object)? = try? JSONParser().parse(frame) else { return "?" }
        if case .string(let step)? = object["step"] { return step }
        if case .string(let op)? = object["op"] { return op }
        return "?"
    }

    /// Asks the source's node service to move `books.p<partition>` to `node`; the parsed reply.
    func move(_ partition: Int, to node: String) throws -> JSONObject {
        let request = PartitionMoveRequest.move(PartitionMoveTicket(service: "books", partition: partition, from: "", to: node))
        let reply = try #require(services[NodeService.namePrefix + "w1"]).answer(request.frames)
        guard case .object(let object) = try JSONParser().parse(reply) else { throw ServiceError(.internal, "not an object") }
        return object
    }

    func entries(_ custody: JournalCustody) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: custody.data + "/books").sorted()
    }
}

@Suite struct PartitionMoveTests {
    @Test func aMovedPartitionIsServedByTheTargetOnlyWithEveryRecord() throws {
        let nodes = try TwoNodes()
        try nodes.source.serve(service: "books", partition: 3)
        try nodes.source.serve(service: "books", partition: 4)
        try nodes.source.write(2000, partition: 3)
        let before = try Data(contentsOf: URL(fileURLWithPath: nodes.source.directory(service: "books", partition: 3) + "/journal.jsonl"))

        let reply = try nodes.move(3, to: "w2")

        #expect(reply["ok"] == .bool(true), "\(reply)")
        #expect(nodes.source.served == ["p4"])
        #expect(nodes.target.served == ["p3"])
        let entries = try nodes.entries(nodes.source)
        #expect(entries.count == 2 && entries[0].hasPrefix("p3.moved-to-w2-") && entries[1] == "p4", "\(entries)")
        #expect(try nodes.entries(nodes.target) == ["p3"])
        let after = try Data(contentsOf: URL(fileURLWithPath: nodes.target.directory(service: "books", partition: 3) + "/journal.jsonl"))
        #expect(after == before)
        #expect(nodes.seen.withLock { $0.filter { $0 == "chunk" }.count } >= 1)
        #expect(nodes.seen.withLock { Array($0.suffix(2)) } == ["finish", "adopt"])
    }

    @Test(arguments: ["begin", "chunk", "finish"])
    func aMoveCutBeforeTheRenameLeavesTheSourceServingAndTheTargetEmpty(step: String) throws {
        let nodes = try TwoNodes()
        try nodes.source.serve(service: "books", partition: 3)
        try nodes.source.write(50, partition: 3)
        nodes.failAt.withLock { $0 = step }

        let reply = try nodes.move(3, to: "w2")

        #expect(reply["ok"] == .bool(false))
        let message = reply["error"]?["message"]
        // A refused `begin` is the target's refusal before the source stopped serving.
        #expect(message.map { "\($0)".contains("stopped at step \(step == "begin" ? "begin" : "copy")") } == true, "\(reply)")
        #expect(reply["error"]?["code"] == .string("unavailable"))
        #expect(nodes.source.served == ["p3"])
        #expect(try nodes.entries(nodes.source) == ["p3"])
        #expect(try nodes.entries(nodes.target) == [], "the abort removed the incoming copy")
        try nodes.source.write(1, partition: 3)  // and it takes writes again
    }

    @Test func aMoveToAnUnknownNodeFailsAndThePartitionKeepsBeingServed() throws {
        let nodes = try TwoNodes()
        try nodes.source.serve(service: "books", partition: 3)

        let reply = try nodes.move(3, to: "w9")

        #expect(reply["ok"] == .bool(false))
        #expect(reply["error"]?["code"] == .string("unavailable"))
        #expect(nodes.source.served == ["p3"])
        #expect(try nodes.entries(nodes.source) == ["p3"])
    }

    @Test func aMoveWhoseAdoptIsLostIsFinishedByRunningItAgain() throws {
        let nodes = try TwoNodes()
        try nodes.source.serve(service: "books", partition: 3)
        try nodes.source.write(10, partition: 3)
        nodes.failAt.withLock { $0 = "adopt" }

        let failed = try nodes.move(3, to: "w2")

        #expect(failed["error"]?["code"] == .string("conflict"), "\(failed)")
        #expect(nodes.source.served == [] && nodes.target.served == [], "nobody serves it: never two owners")
        #expect(try nodes.entries(nodes.target) == ["p3.received"])

        nodes.failAt.withLock { $0 = nil }
        let finished = try nodes.move(3, to: "w2")

        #expect(finished["ok"] == .bool(true), "\(finished)")
        #expect(finished["result"]?["resumed"] == .bool(true))
        #expect(nodes.target.served == ["p3"])
        #expect(try nodes.entries(nodes.target) == ["p3"])
    }

    @Test func movingAPartitionThatIsNotHeldChangesNothing() throws {
        let nodes = try TwoNodes()
        let reply = try nodes.move(5, to: "w2")
        #expect(reply["error"]?["code"] == .string("unavailable"))
        #expect(nodes.seen.withLock { $0 } == [])
    }

    @Test func malformedMoveRequestsAreRefusedWithTheFieldAtFault() throws {
        let nodes = try TwoNodes()
        let target = try #require(nodes.services[NodeService.namePrefix + "w2"])
        let cases: [([[UInt8]], String)] = [
            ([Array(#"{"op":"receive","step":"chunk","service":"books","partition":1,"from":"w1","to":"w2","file":"x","offset":0,"crc32c":0}"#.utf8)], "$"),
            ([Array(#"{"op":"move","service":"books","partition":1,"to":"a/b"}"#.utf8)], "$.to"),
            ([Array(#"{"op":"move","service":"books","partition":4096,"to":"w2"}"#.utf8)], "$.partition"),
            ([Array(#"{"op":"move","service":"books","partition":1,"to":"w2","move_id":"a/b"}"#.utf8)], "$.move_id"),
            ([Array(#"{"op":"adopt","service":"books","partition":1,"from":"w1","to":"w2","files":[],"extra":1}"#.utf8)], "$.extra"),
            ([Array(#"{"op":"receive","step":"wait","service":"books","partition":1,"from":"w1","to":"w2"}"#.utf8)], "$.step"),
            ([Array(#"{"op":"receive","step":"begin","service":"books","partition":1,"from":"w1","to":"w3"}"#.utf8)], "$.to"),
        ]
        for (frames, field) in cases {
            let reply = try JSONParser().parse(target.answer(frames))
            #expect(reply["error"]?["code"] == .string("bad_request"), "\(reply)")
            #expect(reply["error"]?["field"] == .string(field), "\(reply)")
        }
        #expect(try nodes.entries(nodes.target) == [])
    }
}

@Suite struct PartitionHoldersTests {
    private func describe(held: [(String, Int)], moved: [(String, Int, String)] = []) -> JSONValue {
        ["node": "x",
         "held": .array(held.map { ["service": .string($0.0), "partition": .integer($0.1), "state": "serving"] }),
         "moved": .array(moved.map { ["service": .string($0.0), "partition": .integer($0.1), "to": .string($0.2)] })]
    }

    @Test func theMoveGoesToTheOneHolderOrToTheNodeThatGaveThePartitionUpForTheTarget() {
        let describes = [
            "w1": describe(held: [("books", 3), ("progress", 3)]),
            "w2": describe(held: [("books", 4)], moved: [("books", 5, "w3"), ("books", 6, "w1")]),
            "w3": describe(held: []),
        ]
        func source(_ service: String, _ partition: Int, to target: String) -> Result<String, PartitionHolders.Refusal> {
            PartitionHolders(service: service, partition: partition, target: target, describes: describes).source(target: target)
        }
        #expect(source("books", 3, to: "w2") == .success("w1"))
        #expect(source("progress", 3, to: "w3") == .success("w1"))
        #expect(source("books", 4, to: "w2") == .failure(.alreadyThere))
        #expect(source("books", 5, to: "w3") == .success("w2"), "finishing the move whose adopt was lost")
        #expect(source("books", 5, to: "w1") == .failure(.noHolder), "a copy given up for another target is not this move's")
        #expect(source("books", 7, to: "w1") == .failure(.noHolder))
        let twice = ["w1": describe(held: [("books", 3)]), "w2": describe(held: [("books", 3)])]
        #expect(PartitionHolders(service: "books", partition: 3, target: "w3", describes: twice).source(target: "w3") == .failure(.ambiguous(["w1", "w2"])))
    }
}

/// The same move through a real broker on loopback: chunks of 256 KiB and their second frames
/// travel as 7/MDP requests between the node services' worker pools.
@Suite struct PartitionMoveThroughBrokerTests {
    @Test func aPartitionLargerThanAChunkMovesThroughTheBroker() throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let context = try Context()
        let (brokerThread, endpoint) = try startBroker(context)
        defer { _ = brokerThread.stop() }
        let custodies = ["w1", "w2"].map { JournalCustody(node: $0, data: root.path + "/" + $0) }
        defer { custodies.forEach { $0.close() } }
        try FileManager.default.createDirectory(atPath: custodies[1].data + "/books", withIntermediateDirectories: true)
        var threads: [ComponentThread] = []
        defer { threads.forEach { _ = $0.stop() } }
        for custody in custodies {
            let caller = try NodeCaller(endpoints: [endpoint], security: .plaintext)
            let moves = PartitionMoveOps(custody: custody, call: caller.call)
            let pool = try WorkerPool(endpoint: endpoint, service: NodeService.namePrefix + custody.node, sessions: 2, context: context,
                                      handler: moves.handler { _, _, _ in [ServiceError(.unknownOp, "only moves here").replyFrame] })
            threads.append(ComponentThread(pool, name: custody.node))
        }
        try custodies[0].serve(service: "books", partition: 9)
        try custodies[0].write(6000, partition: 9)
        let journal = custodies[0].directory(service: "books", partition: 9) + "/journal.jsonl"
        let before = try Data(contentsOf: URL(fileURLWithPath: journal))
        #expect(before.count > 2 * JournalChunk.maxBytes, "the journal spans several chunks")

        let client = Client(endpoint: endpoint, configuration: ClientConfiguration(timeout: .seconds(60), attempts: 1), context: context)
        defer { client.close() }
        #expect(try eventually { try client.isRegistered(NodeService.namePrefix + "w2") })
        let request = PartitionMoveRequest.move(PartitionMoveTicket(service: "books", partition: 9, from: "", to: "w2"))
        let reply = try JSONParser().parse(try #require(client.call(NodeService.namePrefix + "w1", body: request.frames).first))

        #expect(reply["ok"] == .bool(true), "\(reply)")
        #expect(reply["result"]?["chunks"] == .integer(Int((before.count + JournalChunk.maxBytes - 1) / JournalChunk.maxBytes)))
        #expect(custodies[0].served == [] && custodies[1].served == ["p9"])
        let after = try Data(contentsOf: URL(fileURLWithPath: custodies[1].directory(service: "books", partition: 9) + "/journal.jsonl"))
        #expect(after == before)
    }
}

/// A broker on a free loopback port, running on its thread until that thread is stopped.
private func startBroker(_ context: Context) throws -> (thread: ComponentThread, endpoint: String) {
    let broker = try Broker(endpoints: ["tcp://127.0.0.1:*"], context: context)
    let thread = ComponentThread(broker, name: "broker")
    return (thread, try #require(try broker.waitUntilBound().first))
}

/// Holds the threads that pass it until the test opens it, and tells the test one has come.
private final class Checkpoint: Sendable {
    /// Opened by the first thread that comes.
    let entered = Gate()
    private let gate = Gate()

    /// Opens `entered`, then waits until ``open()``.
    func pass() {
        entered.open()
        gate.wait()
    }

    /// Lets every thread pass, now and later.
    func open() { gate.open() }
}

/// A target whose disk work for a move's `receive` takes as long as the test says: it stands
/// for a large adopt (replaying a big journal) or a slow sync.
private final class GatedCustody: PartitionCustody, @unchecked Sendable {
    let node = "w2"
    let root: String
    let gate = Checkpoint()

    init(root: String) { self.root = root }

    func directory(service: String, partition: Int) -> String {
        gate.pass()
        return "\(root)/\(service)/p\(partition)"
    }

    func isServing(service: String, partition: Int) -> Bool { false }
    func admit(service: String, partition: Int) throws {}
    func release(service: String, partition: Int) throws {}
    func handOff(service: String, partition: Int, to successor: String) throws { throw ServiceError(.badRequest, "not replicated") }
    func serve(service: String, partition: Int) throws {}
}

@Suite struct PartitionReceiveOffThePoolThreadTests {
    @Test func theTargetsOtherServicesKeepAnsweringWhileAReceiveWorks() throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let context = try Context()
        let (brokerThread, endpoint) = try startBroker(context)
        defer { _ = brokerThread.stop() }
        let custody = GatedCustody(root: root.path)
        try FileManager.default.createDirectory(atPath: root.path + "/books", withIntermediateDirectories: true)
        let moves = PartitionMoveOps(custody: custody) { _, _ in throw ServiceError(.unavailable, "this target calls no one") }
        // One pool, one thread, as in a worker: the node service beside another service.
        let pool = try WorkerPool(
            endpoints: [endpoint],
            services: [(NodeService.namePrefix + "w2", moves.handler { _, _, _ in [] }), ("catalog", { body, _, _ in body })],
            sessions: 2, context: context)
        let poolThread = ComponentThread(pool, name: "pool")
        defer { _ = poolThread.stop() }
        // Opened before the pool stops, whatever happens: a handler stuck in it would hold the pool.
        defer { custody.gate.open() }
        let client = Client(endpoint: endpoint, configuration: ClientConfiguration(timeout: .seconds(3), attempts: 1), context: context)
        defer { client.close() }
        #expect(try eventually { try client.isRegistered(NodeService.namePrefix + "w2") && client.isRegistered("catalog") })

        let begin = PartitionMoveRequest.begin(PartitionMoveTicket(service: "books", partition: 3, from: "w1", to: "w2"))
        let receiving = ThreadResult("receive") { () throws -> [[UInt8]] in
            let sender = Client(endpoint: endpoint, configuration: ClientConfiguration(timeout: .seconds(30), attempts: 1), context: context)
            defer { sender.close() }
            return try sender.call(NodeService.namePrefix + "w2", body: begin.frames)
        }
        #expect(custody.gate.entered.wait(), "the receive started")
        // The receive is stuck in its disk work; the pool's thread is not.
        #expect(try client.call("catalog", body: [Array("still here".utf8)]) == [Array("still here".utf8)])
        custody.gate.open()
        let reply = try JSONParser().parse(try #require(try receiving.value().first))
        #expect(reply["ok"] == .bool(true), "\(reply)")
    }
}

/// A source whose release waits until the test lets it, so that a move is still running when
/// the same request comes again.
private final class SlowReleaseCustody: PartitionCustody, @unchecked Sendable {
    let journals: JournalCustody
    let gate = Checkpoint()
    var node: String { journals.node }

    init(_ journals: JournalCustody) { self.journals = journals }

    func directory(service: String, partition: Int) -> String { journals.directory(service: service, partition: partition) }
    func isServing(service: String, partition: Int) -> Bool { journals.isServing(service: service, partition: partition) }
    func admit(service: String, partition: Int) throws {}

    func release(service: String, partition: Int) throws {
        gate.pass()
        try journals.release(service: service, partition: partition)
    }

    func handOff(service: String, partition: Int, to successor: String) throws { throw ServiceError(.badRequest, "not replicated") }
    func serve(service: String, partition: Int) throws { try journals.serve(service: service, partition: partition) }
}

@Suite struct PartitionMoveResentTests {
    @Test func aMoveSentAgainThroughAnotherBrokerGetsTheSameMovesOutcome() throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let context = try Context()
        var endpoints: [String] = []
        var brokers: [ComponentThread] = []
        defer { brokers.forEach { _ = $0.stop() } }
        for _ in 0..<2 {
            let (thread, endpoint) = try startBroker(context)
            brokers.append(thread)
            endpoints.append(endpoint)
        }
        let journals = JournalCustody(node: "w1", data: root.path + "/w1")
        defer { journals.close() }
        try journals.serve(service: "books", partition: 3)
        try journals.write(5, partition: 3)
        let source = SlowReleaseCustody(journals)
        // A target that takes every receive and adopt.
        let moves = PartitionMoveOps(custody: source) { _, _ in [(["node": "w2"] as JSONValue).successReplyFrame] }
        let pool = try WorkerPool(endpoints: endpoints, services: [(NodeService.namePrefix + "w1", moves.handler { _, _, _ in [] })], sessions: 2, context: context)
        let poolThread = ComponentThread(pool, name: "w1")
        defer { _ = poolThread.stop() }
        defer { source.gate.open() }
        let frames = PartitionMoveRequest.move(PartitionMoveTicket(service: "books", partition: 3, from: "", to: "w2"), id: "move-42").frames
        func send(through endpoint: String) -> ThreadResult<JSONValue> {
            ThreadResult("move") {
                let client = Client(endpoint: endpoint, configuration: ClientConfiguration(timeout: .seconds(30), attempts: 1), context: context)
                defer { client.close() }
                return try JSONParser().parse(try #require(try client.call(NodeService.namePrefix + "w1", body: frames).first))
            }
        }
        let checker = Client(endpoint: endpoints[1], configuration: ClientConfiguration(timeout: .seconds(3), attempts: 1), context: context)
        defer { checker.close() }
        #expect(try eventually { try checker.isRegistered(NodeService.namePrefix + "w1") })

        let first = send(through: endpoints[0])
        #expect(source.gate.entered.wait(), "the move started")
        // The command gave up on the first broker and sends the same move through the second.
        let again = send(through: endpoints[1])
        // Likely in hand before the first ends, so that it waits for the outcome (either way it gets it).
        Thread.sleep(forTimeInterval: 0.2)
        source.gate.open()
        let outcome = try first.value()
        #expect(outcome["ok"] == .bool(true), "\(outcome)")
        #expect(try again.value() == outcome, "the resend is answered with the same move's outcome")
        // Sent once more after it ended: the same outcome again, not a second move.
        #expect(try send(through: endpoints[1]).value() == outcome)
        #expect(journals.served == [])
        // The same id for another move is refused, naming the field.
        let other = PartitionMoveRequest.move(PartitionMoveTicket(service: "books", partition: 4, from: "", to: "w2"), id: "move-42").frames
        let refused = try JSONParser().parse(try #require(try checker.call(NodeService.namePrefix + "w1", body: other).first))
        #expect(refused["error"]?["field"] == .string("$.move_id"), "\(refused)")
    }
}

@Suite struct PartitionMoveOutcomeFileTests {
    @Test func outcomesReadBackAsWrittenAndADamagedFileIsRefusedNamingIt() throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let file = PartitionMoveOutcomeFile(dataDirectory: root.path)
        #expect(try file.read() == [], "no file: no outcomes")
        let outcomes = [
            PartitionMoveOutcomeFile.Outcome(id: "move-1", ticket: PartitionMoveTicket(service: "books", partition: 3, from: "", to: "w2"),
                                             reply: Array(#"{"ok":true,"result":{"partition":"books.p3","note":"\"quoted\" é"}}"#.utf8)),
            PartitionMoveOutcomeFile.Outcome(id: "move-2", ticket: PartitionMoveTicket(service: "progress", partition: 0, from: "", to: "w3"),
                                             reply: Array(#"{"ok":false,"error":{"code":"unavailable","message":"m"}}"#.utf8)),
        ]
        try file.write(outcomes)
        #expect(try file.read() == outcomes)

        for damaged in [#"{"moves":[{"move_id":"m"}]}"#, "not json", #"{"moves":[],"extra":1}"#] {
            try Data(damaged.utf8).write(to: URL(fileURLWithPath: file.path))
            #expect {
                _ = try file.read()
            } throws: { error in
                "\(error)".contains(file.path) && "\(error)".contains("is not a list of partition move outcomes")
            }
        }
        try Data(repeating: 32, count: PartitionMoveOutcomeFile.maximumBytes + 1).write(to: URL(fileURLWithPath: file.path))
        #expect(throws: PartitionLayoutError.self) { try file.read() }
    }
}
