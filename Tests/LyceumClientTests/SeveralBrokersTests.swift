import Foundation
import LyceumClient
import LyceumTestSupport
import Synchronization
import Testing

/// Two `lyceum broker`s and one `lyceum worker` registered with both (books, durability
/// `always`): the deployment docs/operations.md's "Several brokers" describes, as real processes.
final class TwoBrokerCluster: @unchecked Sendable {
    let first: String
    let second: String
    private(set) var firstBroker: LyceumProcess
    let secondBroker: LyceumProcess
    let worker: LyceumProcess
    /// Fast heartbeats (3 × 250 ms), so that a dead broker is noticed within a second.
    static let heartbeat = ["--heartbeat-interval", "250", "--heartbeat-liveness", "3"]

    init(data: String) async throws {
        first = try freeLoopbackEndpoint()
        second = try freeLoopbackEndpoint()
        firstBroker = try Self.broker(first)
        secondBroker = try Self.broker(second)
        worker = try LyceumProcess([
            "worker", "--broker", first, "--broker", second, "--service", "books", "--sessions", "4",
            "--data", data, "--durability", "always", "--reconnect-initial", "100",
        ] + Self.heartbeat)
        try await Self.waitUntilServed(through: first, worker: worker)
        try await Self.waitUntilServed(through: second, worker: worker)
    }

    deinit {
        worker.stop()
        firstBroker.stop()
        secondBroker.stop()
    }

    /// Kills the first broker (SIGKILL), as a crash would.
    func killFirstBroker() { firstBroker.stop() }

    /// Starts the first broker again on its endpoint and waits until the worker has registered with it.
    func restartFirstBroker() async throws {
        firstBroker = try Self.broker(first)
        try await Self.waitUntilServed(through: first, worker: worker)
    }

    private static func broker(_ endpoint: String) throws -> LyceumProcess {
        try LyceumProcess(["broker", "--endpoint", endpoint, "--events-endpoint", "none"] + heartbeat)
    }

    /// Waits until `books` answers through the broker at `endpoint` alone.
    static func waitUntilServed(through endpoint: String, worker: LyceumProcess) async throws {
        let probe = try LyceumClient(configuration: LyceumClientConfiguration(brokers: [endpoint], timeout: .milliseconds(500), attempts: 1))
        defer { probe.close() }
        // Generous: the whole suite starts many processes at once on a small machine.
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if (try? await probe.books.list(learner: "probe")) != nil { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("books did not answer through \(endpoint); worker stderr:\n\(worker.standardError)")
        throw CancellationError()
    }
}

@Suite(.serialized, .offTheCooperativePool)
struct SeveralBrokersTests {
    @Test("a broker killed during a write load: every acknowledged write is readable through the other, none applied twice")
    func writesSurviveABrokerKilledMidLoad() async throws {
        try await withDataDirectory { data in
            let cluster = try await TwoBrokerCluster(data: data)
            let lyceum = try LyceumClient(configuration: LyceumClientConfiguration(
                brokers: [cluster.first, cluster.second], timeout: .seconds(1), attempts: 10, initialBackoff: .milliseconds(20)))
            defer { lyceum.close() }
            let writers = 4
            let writesEach = 30
            let acknowledged = Acknowledged()
            // Writers that each create their books one after another, with ids of their own so
            // that a retry through the other broker is recognised by the worker.
            let load = Task {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for writer in 0..<writers {
                        group.addTask {
                            for index in 0..<writesEach {
                                let book = try await lyceum.books.create(
                                    learner: "writer-\(writer)", title: "Book \(index)", author: "A", genre: .mystery, rating: 3,
                                    requestID: "w\(writer)-\(index)")
                                acknowledged.add(book.id, learner: "writer-\(writer)")
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }
            while acknowledged.count < writers * 5 { try await Task.sleep(for: .milliseconds(10)) }
            cluster.killFirstBroker()
            try await load.value
            #expect(acknowledged.count == writers * writesEach)

            // Read through the surviving broker alone: exactly the acknowledged books, each once.
            let survivor = try LyceumClient(configuration: LyceumClientConfiguration(brokers: [cluster.second], timeout: .seconds(5)))
            defer { survivor.close() }
            for writer in 0..<writers {
                let listed = try await survivor.books.list(learner: "writer-\(writer)", limit: 100).books.map(\.id)
                #expect(listed.count == writesEach)
                #expect(Set(listed) == acknowledged.ids(of: "writer-\(writer)"))
            }
            // Restarted, the first broker gets the worker back and serves again.
            try await cluster.restartFirstBroker()
            let throughFirst = try LyceumClient(configuration: LyceumClientConfiguration(brokers: [cluster.first], timeout: .seconds(5)))
            defer { throughFirst.close() }
            #expect(try await throughFirst.books.list(learner: "writer-0", limit: 100).books.count == writesEach)
        }
    }
}

/// The books whose create was acknowledged, by learner; shared by the writers' tasks.
final class Acknowledged: Sendable {
    private let books = Mutex<[String: Set<String>]>([:])

    var count: Int { books.withLock { $0.values.reduce(0) { $0 + $1.count } } }

    func add(_ id: String, learner: String) { _ = books.withLock { $0[learner, default: []].insert(id) } }

    func ids(of learner: String) -> Set<String> { books.withLock { $0[learner] ?? [] } }
}
