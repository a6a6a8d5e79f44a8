import LyceumTestSupport
import Majordomo
import Foundation
import Testing
import ZeroMQ

/// The broker's routing hook (``RoutedService``): requests to a routed name reach the target
/// the hook picks, and every reply, error reply and rejection carries the name the client sent.
@Suite struct RoutingTests {
    static let empty: [UInt8] = []

    /// `shelf` goes to `shelf.even` or `shelf.odd` by its first body frame's last byte; a body
    /// ending in `x` is left to `shelf` itself.
    static func shelf(absent: String = "no worker holds that half of shelf") -> RoutedService {
        RoutedService(name: "shelf", targets: [
            RoutedService.Target(name: "shelf.even", absenceText: absent), RoutedService.Target(name: "shelf.odd", absenceText: absent),
        ]) { body in
            guard let last = body.last, last != UInt8(ascii: "x") else { return nil }
            return Int(last % 2)
        }
    }

    /// Workers answering with their own name, counting what they got.
    final class Halves {
        let counts = Locked<[String: Int]>([:])
        let workers: [RunningWorkers]

        init(_ names: [String], endpoint: String, context: Context) throws {
            let counts = counts
            workers = try names.map { name in
                try RunningWorkers(endpoint: endpoint, service: name, context: context) { body in
                    counts.modify { $0[name, default: 0] += 1 }
                    return body
                }
            }
        }

        func stop() { for worker in workers { worker.stop() } }
    }

    @Test(.enabled(if: pythonHasZMQ, "needs python3-zmq: run scripts/ensure-deps.sh test"))
    func plainPythonClientSeesTheServiceItAddressed() throws {
        let context = try Context()
        let broker = try RunningBroker(BrokerConfiguration(heartbeat: fastHeartbeat, routedServices: [Self.shelf()]), context: context)
        defer { broker.stop() }
        let halves = try Halves(["shelf.even", "shelf.odd"], endpoint: broker.endpoint, context: context)
        defer { halves.stop() }
        let client = quickClient(broker.endpoint, context: context, timeout: .seconds(3))
        #expect(try eventually { try client.isRegistered("shelf") })
        // The Python client fails unless each reply's service frame is `shelf` and echoes the body;
        // its bodies `python request N` end in N's last digit, half of them even.
        let python = try ChildProcess.python(["client", broker.endpoint, "shelf", "200"])
        defer { python.stop() }
        #expect(python.waitForExit() == 0)
        #expect(python.lines.last == "ok 200")
        #expect(halves.counts.get() == ["shelf.even": 100, "shelf.odd": 100])
    }

    @Test func unroutedRequestsOfARoutedNameAndOtherServicesAreServedAsAddressed() throws {
        let context = try Context()
        let broker = try RunningBroker(BrokerConfiguration(heartbeat: fastHeartbeat, routedServices: [Self.shelf()]), context: context)
        defer { broker.stop() }
        let halves = try Halves(["shelf.even", "shelf.odd", "shelf", "echo"], endpoint: broker.endpoint, context: context)
        defer { halves.stop() }
        let client = quickClient(broker.endpoint, context: context, timeout: .seconds(3))
        #expect(try eventually { try client.isRegistered("echo") && client.isRegistered("shelf") })
        #expect(try client.call("shelf", body: [bytes("box")]) == [bytes("box")])
        #expect(try client.call("echo", body: [bytes("1")]) == [bytes("1")])
        #expect(try client.call("shelf.odd", body: [bytes("x")]) == [bytes("x")])
        #expect(halves.counts.get() == ["shelf": 1, "echo": 1, "shelf.odd": 1])
    }

    @Test func rejectionsOfARoutedRequestCarryTheAddressedNameAndTheTargetsText() throws {
        let context = try Context()
        let configuration = BrokerConfiguration(heartbeat: fastHeartbeat, unknownServiceTimeout: .milliseconds(200),
                                                routedServices: [Self.shelf(absent: "no worker holds the odd half of shelf")])
        let broker = try RunningBroker(configuration, context: context)
        defer { broker.stop() }
        let halves = try Halves(["shelf.even"], endpoint: broker.endpoint, context: context)
        defer { halves.stop() }
        let client = quickClient(broker.endpoint, context: context, timeout: .seconds(3))
        #expect(try eventually { try client.isRegistered("shelf.even") })
        // One target without a worker: mmi.service must not claim the routed service is served.
        #expect(try !client.isRegistered("shelf"))
        let raw = try context.socket(.dealer)
        try raw.connect(broker.endpoint)
        try raw.send(multipart: [Self.empty, bytes("MDPC01"), bytes("shelf"), bytes("1")])
        let reply = try #require(try receive(raw, timeout: .seconds(10)))
        #expect(Array(reply.prefix(3)) == [Self.empty, bytes("MDPC01"), bytes("shelf")])
        #expect(reply.last == [0x00] + bytes("MDP-ERROR service_unknown no worker holds the odd half of shelf"))
    }
}
