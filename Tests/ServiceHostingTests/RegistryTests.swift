import Configuration
import Access
import Foundation
import LearningServices
import LyceumLifecycle
import LyceumServer
import LyceumTestSupport
import Majordomo
@testable import ServiceHosting
import Testing
import ZeroMQ

/// A service that exists only in this test target: `ping` answers `{"pong":true}`.
private final class EchoService: LearningService {
    static let serviceName = "test.echo"
    var name: String { Self.serviceName }

    func handleWithCommit(_ frame: [UInt8], caller: Caller, completion: @escaping @Sendable (HandledRequest<Never>) -> Void) {
        if let request = try? Request(frame), request.op == "ping" {
            completion(HandledRequest(reply: Array(#"{"ok":true,"result":{"pong":true}}"#.utf8), op: request.op))
        } else {
            let error = ServiceError(.unknownOp, "test.echo has only ping", field: "$.op")
            completion(HandledRequest(reply: error.replyFrame, op: nil, errorCode: error.code))
        }
    }
}

/// Runs what `serve` runs for `host`, each service on its own thread, in this process; stop the
/// threads in reverse order.
func serveInProcess(_ host: ServiceHost, settings: Settings) throws -> [ComponentThread] {
    try ServerProcesses.serveComponents(host, settings: settings, context: try Context()).map { ComponentThread($0.component, name: $0.name) }
}

struct RegistryTests {
    /// The one registration of the test-only service.
    private static let registry = ServiceRegistry.standard.adding(.stateless(EchoService.serviceName) { _ in EchoService() })

    @Test func aServiceRegisteredInOnePlaceIsServedListedByStatusAndCounted() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        var settings = Settings()
        settings.dataDirectory = data.path
        settings.endpoints = [try freeLoopbackEndpoint()]
        settings.eventsEndpoint = "none"
        _ = ProcessMetrics.backend
        let host = try ServiceHost(serving: Self.registry.names, registry: Self.registry, settings: settings.hosting)
        defer { host.close() }
        let threads = try serveInProcess(host, settings: settings)
        defer { for thread in threads.reversed() { _ = thread.stop() } }

        let context = try Context()
        let client = Client(
            endpoint: settings.endpoints[0], configuration: ClientConfiguration(timeout: .seconds(10), attempts: 1), context: context)
        defer { client.close() }
        let pong = try client.call(EchoService.serviceName, body: [Array(#"{"op":"ping"}"#.utf8)])
        #expect(try parse(#require(pong.first)).result["pong"] as? Bool == true)
        let refused = try client.call(EchoService.serviceName, body: [Array(#"{"op":"pong"}"#.utf8)])
        #expect(try parse(#require(refused.first)).errorCode == "unknown_op")

        let status = try parse(#require(try client.call(ProcessReport.statusService, body: [[]]).first))
        let services = status["services"] as? [[String: Any]] ?? []
        let echo = try #require(services.first { $0["name"] as? String == EchoService.serviceName }, "mmi.status lists \(services)")
        #expect(echo["local"] as? Bool == true)
        #expect(Set(services.compactMap { $0["name"] as? String }).isSuperset(of: Self.registry.names))

        let metrics = ProcessMetrics.backend.exposition()
        #expect(metrics.contains(#"lyceum_requests_total{service="test.echo",op="ping"} 1"#), "\(metrics)")
        #expect(metrics.contains(#"lyceum_requests_total{service="test.echo",op="invalid"} 1"#))
        #expect(metrics.contains(#"lyceum_request_errors_total{service="test.echo",code="unknown_op"} 1"#))
        #expect(metrics.contains(#"lyceum_request_duration_seconds_count{service="test.echo",op="ping"} 1"#))
    }
}
