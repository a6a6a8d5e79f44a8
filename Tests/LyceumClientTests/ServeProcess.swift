import Foundation
import LyceumClient
import LyceumTestSupport
import Testing
import ZeroMQ

/// `lyceum serve` on free loopback ports with a data directory, for the client to call.
final class ServeProcess: @unchecked Sendable {
    let endpoint: String
    let eventsEndpoint: String
    let snapshotEndpoint: String
    let data: String
    private let arguments: [String]
    /// The keys the readiness probe uses, when `arguments` make serve require CURVE.
    private let probeKeys: CurveClientKeys?
    private(set) var process: LyceumProcess

    /// Starts serve on `endpoint` (a free one when `nil`) and waits until its services answer,
    /// asked with `probeKeys` (a key that may call every service) when serve requires CURVE.
    init(data: String, endpoint: String? = nil, arguments: [String] = [], probeKeys: CurveClientKeys? = nil) async throws {
        self.probeKeys = probeKeys
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

    /// A client of this serve alone, a CURVE client with `curve`.
    func client(timeout: Duration = .seconds(5), attempts: Int = 3, curve: CurveClientKeys? = nil) throws -> LyceumClient {
        try LyceumClient(configuration: LyceumClientConfiguration(
            brokers: [endpoint], timeout: timeout, attempts: attempts, curve: curve, events: events))
    }

    /// Kills serve (SIGKILL) and starts it again on the same endpoints and data.
    func restart() async throws {
        process.stop()
        process = try LyceumProcess(arguments)
        try await waitUntilServing()
    }

    /// Waits until every service has a worker (asked with the probe's keys under CURVE). The
    /// suites that start serve run off the cooperative pool, so this blocking wait holds no
    /// thread another test needs.
    private func waitUntilServing() async throws {
        let security = probeKeys.map { SocketSecurity.curveClient($0.keyPair, serverKey: $0.serverPublicKey) } ?? .plaintext
        try LyceumTestSupport.waitUntilServing(["catalog", "books", "progress"], at: endpoint, security: security) {
            "stderr:\n\(process.standardError)"
        }
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
