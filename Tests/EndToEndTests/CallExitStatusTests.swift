import Foundation
import LyceumTestSupport
import Testing

/// `lyceum call`'s exit status when the broker refuses the request, with real `broker` and `call`
/// processes: a refusal is a reply, so it exits 1 like the service's error replies; 3 is only for
/// no reply at all (README, "Calling it").
@Suite(.serialized)
struct CallExitStatusTests {
    typealias Outcome = (status: Int32?, stdout: String, stderr: String)

    static let body = #"{"op":"list","learner":"ada"}"#

    static func call(_ brokers: [String], _ service: String, timeout: String = "2000", _ options: [String] = []) throws -> Outcome {
        try LyceumProcess.run(["call", "--timeout", timeout] + brokers.flatMap { ["--broker", $0] } + options + [service, body])
    }

    /// Calls until stderr names `code` (a broker just started may not listen yet: `broker_unreachable`).
    static func callUntil(_ code: String, _ brokers: [String], _ service: String, timeout: String = "2000", _ options: [String] = []) -> Outcome {
        var outcome: Outcome = (nil, "", "")
        _ = eventually {
            outcome = (try? call(brokers, service, timeout: timeout, options)) ?? outcome
            return outcome.stderr.contains(code)
        }
        return outcome
    }

    @Test("queue_full and overloaded exit 1")
    func fullQueues() throws {
        let endpoint = try freeLoopbackEndpoint()
        let broker = try LyceumProcess([
            "broker", "--endpoint", endpoint, "--events-endpoint", "none",
            "--queue-limit", "1", "--queue-limit-total", "1", "--unknown-service-timeout", "600000",
        ])
        defer { broker.stop() }
        // No worker serves `shelf`: this request waits in the broker's only queue place.
        let holder = try LyceumProcess(["call", "--broker", endpoint, "--timeout", "600000", "shelf", Self.body])
        defer { holder.stop() }

        let full = Self.callUntil("queue_full", [endpoint], "shelf")
        #expect(full.status == 1, "\(full.status.map(String.init) ?? "none") \(full.stderr)\nbroker:\n\(broker.standardError)")
        #expect(full.stderr.contains("refused the request: queue_full"), "\(full.stderr)")
        #expect(full.stdout.isEmpty)

        let overloaded = try Self.call([endpoint], "rack")
        #expect(overloaded.status == 1 && overloaded.stderr.contains("refused the request: broker_overloaded"), "\(overloaded.stderr)")
    }

    @Test("a request the broker took but nobody answered exits 3")
    func unanswered() throws {
        let endpoint = try freeLoopbackEndpoint()
        let broker = try LyceumProcess(["broker", "--endpoint", endpoint, "--events-endpoint", "none", "--unknown-service-timeout", "600000"])
        defer { broker.stop() }
        let unanswered = Self.callUntil("timed_out", [endpoint], "shelf", timeout: "500")
        #expect(unanswered.status == 3 && unanswered.stdout.isEmpty, "\(unanswered.status.map(String.init) ?? "none") \(unanswered.stderr)")
    }

    @Test("service_unknown exits 1, also when a later broker of the list is unreachable")
    func serviceUnknown() throws {
        let endpoint = try freeLoopbackEndpoint()
        let broker = try LyceumProcess(["broker", "--endpoint", endpoint, "--events-endpoint", "none", "--unknown-service-timeout", "50"])
        defer { broker.stop() }
        let unknown = Self.callUntil("service_unknown", [endpoint], "shelf")
        #expect(unknown.status == 1 && unknown.stderr.contains("refused the request: service_unknown"), "\(unknown.stderr)")

        // The second broker's silence does not hide the first's answer.
        let unreachable = try freeLoopbackEndpoint()
        let both = try Self.call([endpoint, unreachable], "shelf", timeout: "300")
        #expect(both.status == 1 && both.stderr.contains("service_unknown"), "\(both.status.map(String.init) ?? "none") \(both.stderr)")
    }

    @Test("a first broker that is down is passed over for the next, not waited for through the reply timeout")
    func firstBrokerDown() throws {
        let endpoint = try freeLoopbackEndpoint()
        let broker = try LyceumProcess(["broker", "--endpoint", endpoint, "--events-endpoint", "none"])
        defer { broker.stop() }
        let down = try freeLoopbackEndpoint()
        // The reply timeout is ten minutes: waiting it out for the first broker passes the hang limit.
        let status = try LyceumProcess.run(["status", "--broker", down, "--broker", endpoint, "--timeout", "600000"], timeout: .seconds(180))
        #expect(status.status == 0, "\(status.status.map(String.init) ?? "none") \(status.stderr)")
        #expect(status.stdout.contains("\"services\""), "\(status.stdout)")
    }

    @Test("forbidden from a CURVE broker exits 1")
    func forbidden() throws {
        let keys = try CurveEndToEndTests.standardKeys()
        let endpoint = try freeLoopbackEndpoint()
        let broker = try LyceumProcess([
            "broker", "--endpoint", endpoint, "--events-endpoint", "none",
            "--curve-secret-key", keys.secretPath("server"), "--authorized-keys", keys.authorized,
        ])
        defer { broker.stop() }
        // A dashboard key may subscribe to events but call no service.
        let refused = Self.callUntil("forbidden", [endpoint], "books", keys.client("dashboard"))
        #expect(refused.status == 1 && refused.stderr.contains("refused the request: forbidden"), "\(refused.stderr)\nbroker:\n\(broker.standardError)")
    }
}
