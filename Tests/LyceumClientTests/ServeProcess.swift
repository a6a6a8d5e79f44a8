import Foundation
import LyceumClient
import LyceumTestSupport
import Testing

/// `lyceum serve` on free loopback ports with a data directory, for the client to call.
final class ServeProcess: @unchecked Sendable {
    let endpoint: String
    let eventsEndpoint: String
    let snapshotEndpoint: String
    let data: String
    private let arguments: [String]
    private(set) var process: LyceumProcess

    /// Starts serve on `endpoint` (a free one when `nil`) and waits until its services answer.
    init(data: String, endpoint: String? = nil, arguments: [String] = []) async throws {
        self.endpoint = try endpoint ?? freeLoopbackEndpoint()
        eventsEndpoint = try freeLoopbackEndpoint()
        snapshotEndpoint = try freeLoopbackEndpoint()
        self.data = data
        self.arguments = ["serve", "--endpoint", self.endpoint, "--events-endpoint", eventsEndpoint,
                          "--snapshot-endpoint", snapshotEndpoint, "--data", data] + arguments
        process = try LyceumProcess(self.arguments)
        try await waitUntilServing()
    }

    deinit { process.stop() }

    /// The events endpoints, for a client's configuration.
    var events: LyceumClientConfiguration.EventEndpoints { .init(events: eventsEndpoint, snapshot: snapshotEndpoint) }

    /// A client of this serve alone.
    func client(timeout: Duration = .seconds(5), attempts: Int = 3) throws -> LyceumClient {
        try LyceumClient(configuration: LyceumClientConfiguration(brokers: [endpoint], timeout: timeout, attempts: attempts, events: events))
    }

    /// Kills serve (SIGKILL) and starts it again on the same endpoints and data.
    func restart() async throws {
        process.stop()
        process = try LyceumProcess(arguments)
        try await waitUntilServing()
    }

    /// Waits until every service has a worker: a read of each succeeds.
    private func waitUntilServing() async throws {
        let probe = try client(timeout: .milliseconds(500), attempts: 1)
        defer { probe.close() }
        // Generous: the whole suite starts many processes at once on a small machine.
        let deadline = ContinuousClock.now + .seconds(90)
        while ContinuousClock.now < deadline {
            do {
                _ = try await probe.catalog.listCategories()
                _ = try await probe.books.list(learner: "probe")
                _ = try await probe.progress.courseStats(course: "1")
                return
            } catch {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        Issue.record("lyceum serve did not answer; stderr:\n\(process.standardError)")
        throw CancellationError()
    }
}

/// A temporary data directory, removed when the test ends.
func withDataDirectory<T>(_ body: (String) async throws -> T) async throws -> T {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    return try await body(directory.path)
}

/// The error a call threw, or `nil` when it succeeded.
func lyceumError<T>(_ call: () async throws(LyceumError) -> T) async -> LyceumError? {
    do {
        _ = try await call()
        return nil
    } catch {
        return error
    }
}
