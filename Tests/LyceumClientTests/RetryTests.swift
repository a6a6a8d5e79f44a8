import Foundation
import LyceumClient
import LyceumTestSupport
import Testing

/// Retries carry the write's `request_id`, so the server applies it once; fail-over moves to the
/// next broker.
@Suite(.serialized, .offTheCooperativePool)
struct RetryTests {
    @Test("a create retried while the server is stopped is applied once")
    func retriedCreateAppliedOnce() async throws {
        try await withDataDirectory { data in
            let serve = try Deployment.serve(data: data)
            let lyceum = try LyceumClient(configuration: LyceumClientConfiguration(
                brokers: [serve.endpoint], timeout: .seconds(1), attempts: 12, initialBackoff: .milliseconds(50)))
            defer { lyceum.close() }
            _ = try await lyceum.books.list(learner: "ada")
            // The first attempt reaches the stopped server's socket buffer and is handled when it
            // continues, as is the retry on the new connection: two requests, one request_id.
            #expect(serve.process.suspend())
            let create = Task { try await lyceum.books.create(learner: "ada", title: "Dune", author: "Frank Herbert", genre: .fantasy, rating: 5) }
            // Longer than one attempt, so that at least one retry goes out; the attempts after the
            // stop leave a loaded machine seconds to answer.
            try await Task.sleep(for: .milliseconds(2500))
            serve.process.send(SIGCONT)
            let book = try await create.value
            let listed = try await lyceum.books.list(learner: "ada")
            #expect(listed.books.map(\.id) == [book.id])
        }
    }

    @Test("the same request_id after a server restart returns the first reply and adds nothing")
    func sameRequestIDAcrossRestart() async throws {
        try await withDataDirectory { data in
            let serve = try Deployment.serve(data: data)
            let first = try serve.lyceumClient()
            let book = try await first.books.create(learner: "ada", title: "Dune", author: "Frank Herbert", genre: .fantasy, rating: 5, requestID: "order-42")
            first.close()
            try serve.restart(after: SIGKILL)
            let lyceum = try serve.lyceumClient()
            defer { lyceum.close() }
            let again = try await lyceum.books.create(learner: "ada", title: "Dune", author: "Frank Herbert", genre: .fantasy, rating: 5, requestID: "order-42")
            #expect(again == book)
            #expect(try await lyceum.books.list(learner: "ada").books == [book])
        }
    }

    /// The scenario: an active serve and a standby that takes over the same data directory (a
    /// shared disk) on another endpoint when the active one dies. Two serves cannot share a data
    /// directory at once (the journal is locked), and a worker registers with one broker, so a
    /// client with both endpoints is what keeps an application running across the switch.
    @Test("when the first broker dies the client fails over to the second, which serves the same data")
    func failOverToTheSecondBroker() async throws {
        try await withDataDirectory { data in
            let active = try Deployment.serve(data: data)
            let standbyEndpoint = try freeLoopbackEndpoint()
            let lyceum = try LyceumClient(configuration: LyceumClientConfiguration(
                brokers: [active.endpoint, standbyEndpoint], timeout: .milliseconds(500), attempts: 4, initialBackoff: .milliseconds(20)))
            defer { lyceum.close() }
            let book = try await lyceum.books.create(learner: "ada", title: "Dune", author: "Frank Herbert", genre: .fantasy, rating: 5)
            active.process.stop()
            let standby = try Deployment.serve(data: data, endpoint: standbyEndpoint)
            #expect(try await lyceum.books.get(learner: "ada", id: book.id) == book)
            let second = try await lyceum.books.create(learner: "ada", title: "Emma", author: "Jane Austen", genre: .romance, rating: 4)
            #expect(try await lyceum.books.list(learner: "ada").books.map(\.id) == [book.id, second.id])
            #expect(standby.process.isRunning)
        }
    }
}
