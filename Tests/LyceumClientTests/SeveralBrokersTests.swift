import Foundation
import LyceumClient
import LyceumTestSupport
import Synchronization
import Testing

@Suite(.serialized, .offTheCooperativePool)
struct SeveralBrokersTests {
    @Test("a broker killed during a write load: every acknowledged write is readable through the other, none applied twice")
    func writesSurviveABrokerKilledMidLoad() async throws {
        try await withDataDirectory { data in
            let (cluster, second) = try Deployment.twoBrokers(data: data)
            let lyceum = try LyceumClient(configuration: LyceumClientConfiguration(
                brokers: [cluster.endpoint, second], timeout: .seconds(1), attempts: 10, initialBackoff: .milliseconds(20)))
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
            #expect(await eventuallyAsync { acknowledged.count >= writers * 5 })
            cluster.stop("broker")
            try await load.value
            #expect(acknowledged.count == writers * writesEach)

            // Read through the surviving broker alone: exactly the acknowledged books, each once.
            let survivor = try LyceumClient(configuration: LyceumClientConfiguration(brokers: [second], timeout: .seconds(5)))
            defer { survivor.close() }
            for writer in 0..<writers {
                let listed = try await survivor.books.list(learner: "writer-\(writer)", limit: 100).books.map(\.id)
                #expect(listed.count == writesEach)
                #expect(Set(listed) == acknowledged.ids(of: "writer-\(writer)"))
            }
            // Restarted, the first broker gets the worker back and serves again.
            try cluster.restart("broker", after: SIGKILL, registering: ["books"])
            let throughFirst = try LyceumClient(configuration: LyceumClientConfiguration(brokers: [cluster.endpoint], timeout: .seconds(5)))
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
