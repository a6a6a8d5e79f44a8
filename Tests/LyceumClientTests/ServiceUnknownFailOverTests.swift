import Foundation
import LyceumClient
import LyceumTestSupport
import Testing

/// A broker that answers `service_unknown` to one call is alive: only that call moves to the
/// next broker, and the calls already waiting on it get their own replies there.
@Suite(.serialized, .offTheCooperativePool)
struct ServiceUnknownFailOverTests {
    @Test("service_unknown for one call moves only that call; another call waiting at the same broker gets its reply there")
    func serviceUnknownLeavesOtherCallsWaiting() async throws {
        try await withDataDirectory { data in
            let first = try freeLoopbackEndpoint()
            let second = try freeLoopbackEndpoint()
            // Long liveness (1000 × 2.5 s): the stopped catalog worker must stay registered while
            // it is held, however long a loaded machine takes to get the held call to it.
            let patient = ["--heartbeat-liveness", "1000"]
            let firstBroker = try LyceumProcess(
                ["broker", "--endpoint", first, "--events-endpoint", "none", "--unknown-service-timeout", "300"] + patient)
            defer { firstBroker.stop() }
            let secondBroker = try LyceumProcess(["broker", "--endpoint", second, "--events-endpoint", "none"])
            defer { secondBroker.stop() }
            // The first broker has catalog only, the second books only: a call resent to the
            // second broker's catalog could only fail, and books has to move.
            let catalogWorker = try LyceumProcess(
                ["worker", "--broker", first, "--service", "catalog", "--sessions", "1", "--data", data] + patient)
            defer { catalogWorker.stop() }
            let booksWorker = try LyceumProcess(["worker", "--broker", second, "--service", "books", "--sessions", "2", "--data", data])
            defer { booksWorker.stop() }
            let probeFirst = try LyceumClient(configuration: LyceumClientConfiguration(brokers: [first], timeout: .milliseconds(500), attempts: 1))
            defer { probeFirst.close() }
            let probeSecond = try LyceumClient(configuration: LyceumClientConfiguration(brokers: [second], timeout: .milliseconds(500), attempts: 1))
            defer { probeSecond.close() }
            // Limits of minutes, for hangs only: the suite's process tests keep a small machine busy.
            #expect(await eventuallyAsync(timeout: .seconds(300)) {
                guard (try? await probeFirst.catalog.listCategories()) != nil else { return false }
                return (try? await probeSecond.books.list(learner: "probe")) != nil
            }, "the workers never served; stderr:\n\(catalogWorker.standardError)\n\(booksWorker.standardError)")

            // Two attempts: books needs its second at the second broker; the held catalog call
            // would spend its second there in vain if it were resent.
            let lyceum = try LyceumClient(configuration: LyceumClientConfiguration(
                brokers: [first, second], timeout: .seconds(600), attempts: 2, initialBackoff: .milliseconds(20)))
            defer { lyceum.close() }
            #expect(catalogWorker.suspend())
            defer { catalogWorker.send(SIGCONT) }
            // On a thread of its own: on the cooperative pool it could wait minutes to be sent.
            let held = Task(executorPreference: ThreadPerJobExecutor.shared) { try await lyceum.catalog.listCategories() }
            #expect(await eventuallyAsync(timeout: .seconds(300)) {
                let status = try? LyceumProcess.run(["status", "--broker", first])
                return status?.stdout.contains(#""name":"catalog","workers":1,"idle_workers":0,"#) == true
            }, "the catalog call never reached the stopped worker")

            // The first broker answers service_unknown for books: that call moves to the second.
            let books = try await lyceum.books.list(learner: "ada")
            #expect(books.books.isEmpty)

            catalogWorker.send(SIGCONT)
            let outcome = await held.result
            #expect((try? outcome.get())?.isEmpty == false, "the held catalog call failed: \(outcome)")
        }
    }
}
