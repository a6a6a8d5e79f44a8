import Foundation
import LyceumClient
import LyceumTestSupport
import ZeroMQ

/// What the client tests take of a ``Deployment``: a `LyceumClient` of it, and its events.
extension Deployment {
    /// The events endpoints of a `serve` deployment, for a client's configuration.
    var events: LyceumClientConfiguration.EventEndpoints { .init(events: eventsEndpoint, snapshot: snapshotEndpoint) }

    /// A client of this deployment's endpoint alone, a CURVE client with `curve`.
    func lyceumClient(timeout: Duration = .seconds(5), attempts: Int = 3, curve: CurveClientKeys? = nil) throws -> LyceumClient {
        try LyceumClient(configuration: LyceumClientConfiguration(
            brokers: [endpoint], timeout: timeout, attempts: attempts, curve: curve, events: events))
    }
}

extension CurveClientKeys {
    /// The socket security of a 7/MDP client with these keys: a readiness probe's, when serve requires CURVE.
    var security: SocketSecurity { .curveClient(keyPair, serverKey: serverPublicKey) }
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
