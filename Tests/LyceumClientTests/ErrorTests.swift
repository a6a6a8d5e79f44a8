import Foundation
import JSON
@testable import LyceumClient
import LyceumTestSupport
import Testing

/// Each error a server or broker can give, as the client's typed ``LyceumError``.
@Suite(.serialized, .offTheCooperativePool)
struct ErrorTests {
    /// Any result at all: the tests that use it expect an error.
    private struct AnyResult: ReplyResult {
        init(reply: inout JSONObjectReader) {}
    }

    @Test func theServicesErrorCodes() async throws {
        try await withDataDirectory { data in
            let serve = try Deployment.serve(data: data)
            let lyceum = try serve.lyceumClient()
            defer { lyceum.close() }
            let badRating = await lyceumError { () async throws(LyceumError) in
                try await lyceum.books.create(learner: "ada", title: "Dune", author: "Frank Herbert", genre: .fantasy, rating: 9)
            }
            #expect(badRating?.code == .badRequest && badRating?.field == "$.rating" && badRating?.service == "books" && badRating?.op == "create")
            let missing = await lyceumError { () async throws(LyceumError) in try await lyceum.books.get(learner: "ada", id: "nope") }
            #expect(missing?.code == .notFound)
            #expect(await lyceumError { () async throws(LyceumError) in try await lyceum.catalog.getCourse("nope") }?.code == .notFound)

            let book = try await lyceum.books.create(learner: "ada", title: "Dune", author: "Frank Herbert", genre: .fantasy, rating: 5)
            let stale = await lyceumError { () async throws(LyceumError) in
                try await lyceum.books.update(learner: "ada", id: book.id, expectedVersion: 7, rating: 1)
            }
            #expect(stale?.code == .conflict)
            _ = try await lyceum.books.create(learner: "ada", title: "A", author: "B", genre: .kids, rating: 1, requestID: "reused")
            let reused = await lyceumError { () async throws(LyceumError) in
                try await lyceum.books.create(learner: "ada", title: "Other", author: "B", genre: .kids, rating: 1, requestID: "reused")
            }
            #expect(reused?.code == .conflict)

            let unknownOp = await lyceumError { () async throws(LyceumError) in
                try await lyceum.caller.call("books", "shelve", ["learner": .string("ada")], as: AnyResult.self)
            }
            #expect(unknownOp?.code == .unknownOp && unknownOp?.field == "$.op")
            let tooLarge = await lyceumError { () async throws(LyceumError) in
                try await lyceum.catalog.search(String(repeating: "a", count: 70_000))
            }
            #expect(tooLarge?.code == .tooLarge, "\(String(describing: tooLarge))")
        }
    }

    @Test("service_unknown after the broker's wait, broker_unreachable when no broker listens, timed_out when it never answers")
    func clientSideErrors() async throws {
        try await withDataDirectory { data in
            let serve = try Deployment.serve(data: data)
            let patient = try serve.lyceumClient(timeout: .seconds(6), attempts: 1)
            defer { patient.close() }
            let unknown = await lyceumError { () async throws(LyceumError) in
                try await patient.caller.call("library", "list", as: AnyResult.self)
            }
            #expect(unknown?.code == .serviceUnknown && unknown?.service == "library" && unknown?.endpoint == serve.endpoint)

            let nowhere = try LyceumClient(configuration: LyceumClientConfiguration(
                brokers: [try freeLoopbackEndpoint()], timeout: .milliseconds(200), attempts: 2, initialBackoff: .milliseconds(10)))
            defer { nowhere.close() }
            let unreachable = await lyceumError { () async throws(LyceumError) in try await nowhere.catalog.listCategories() }
            #expect(unreachable?.code == .brokerUnreachable && unreachable?.op == "list_categories", "\(String(describing: unreachable))")

            let impatient = try serve.lyceumClient(timeout: .milliseconds(300), attempts: 2)
            defer { impatient.close() }
            _ = try await impatient.catalog.listCategories()
            #expect(serve.process.suspend())
            defer { serve.process.send(SIGCONT) }
            let silent = await lyceumError { () async throws(LyceumError) in try await impatient.catalog.listCategories() }
            #expect(silent?.code == .timedOut, "\(String(describing: silent))")
        }
    }

    /// The worker stays stopped while the test polls `status` (each a process); by default a
    /// broker gives a silent worker up after 7.5 s, and the request in its hands with it.
    private static let patientHeartbeats = ["--heartbeat-liveness", "100"]

    @Test("queue_full and overloaded from a broker whose worker does not answer")
    func brokerRejections() async throws {
        try await withDataDirectory { data in
            let endpoint = try freeLoopbackEndpoint()
            let broker = try LyceumProcess([
                "broker", "--endpoint", endpoint, "--events-endpoint", "none", "--queue-limit", "1", "--queue-limit-total", "1",
            ] + Self.patientHeartbeats)
            defer { broker.stop() }
            let worker = try LyceumProcess(["worker", "--broker", endpoint, "--service", "books", "--service", "catalog", "--sessions", "1", "--data", data]
                                           + Self.patientHeartbeats)
            defer { worker.stop() }
            // Long enough for the held requests to outlast the status polls below on a loaded machine.
            let lyceum = try LyceumClient(configuration: LyceumClientConfiguration(brokers: [endpoint], timeout: .seconds(90), attempts: 1))
            defer { lyceum.close() }
            #expect(await eventuallyAsync {
                guard (try? await lyceum.books.list(learner: "ada")) != nil else { return false }
                return (try? await lyceum.catalog.listCategories()) != nil
            })

            #expect(worker.suspend())
            defer { worker.send(SIGCONT) }
            // One books request goes to the stopped worker, one more waits in the queue (the whole
            // broker's limit too), and then the service's queue and the broker's are full.
            let held = (0..<2).map { _ in Task { try await lyceum.books.list(learner: "ada") } }
            #expect(await eventuallyAsync {
                let status = try? LyceumProcess.run(["status", "--broker", endpoint])
                return status?.stdout.contains(#""queued_requests":1,"#) == true
            }, "the second request never waited in the broker's queue")
            let full = await lyceumError { () async throws(LyceumError) in try await lyceum.books.list(learner: "ada") }
            #expect(full?.code == .queueFull, "\(String(describing: full))")
            let overloaded = await lyceumError { () async throws(LyceumError) in try await lyceum.catalog.listCategories() }
            #expect(overloaded?.code == .overloaded, "\(String(describing: overloaded))")
            worker.send(SIGCONT)
            for task in held { _ = try await task.value }
        }
    }

    @Test("an error code this client does not know decodes as .other; forbidden and unauthenticated are known")
    func unknownCodes() throws {
        func code(of reply: String) -> LyceumError.Code? {
            do {
                _ = try ReplyEnvelope.decode(Array(reply.utf8), as: AnyResult.self, service: "books", op: "get")
                return nil
            } catch {
                return error.code
            }
        }
        #expect(code(of: #"{"ok":false,"error":{"code":"teapot","message":"short and stout"}}"#) == .other("teapot"))
        #expect(code(of: #"{"ok":false,"error":{"code":"forbidden","message":"not yours"}}"#) == .forbidden)
        #expect(code(of: #"{"ok":false,"error":{"code":"unauthenticated","message":"who?"}}"#) == .unauthenticated)
        #expect(code(of: #"{"ok":false,"error":{"code":"unavailable","message":"disk full"}}"#) == .unavailable)
        #expect(code(of: #"{"ok":false,"error":{"code":"internal","message":"bug"}}"#) == .internal)
        #expect(code(of: "not json") == .invalidReply)
        #expect(code(of: #"{"ok":true,"result":null}"#) == .invalidReply)
    }
}
