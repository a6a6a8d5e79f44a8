import Foundation
import LyceumLifecycle
import LyceumTestSupport
import Majordomo
import Testing
import ZeroMQ

/// A worker and a broker with different heartbeat settings (protocol/majordomo.md, "Draining a
/// worker, and heartbeat settings that differ"): no false disconnects while each one's interval
/// is shorter than the other's expiry, in either dialect; a worker heartbeating slower than the
/// broker's expiry is purged, and registers again.
@Suite(.serialized) struct HeartbeatMismatchTests {
    static let service = "patient"
    /// The broker's: a worker silent for 1 s is gone.
    static let brokerHeartbeat = Heartbeat(interval: .milliseconds(250), liveness: 4)

    /// Whether the broker counted `sessions` workers of ``service`` at every look during
    /// `duration`, looking every 20 ms: a wait for idling, not a timing assertion.
    static func stayedRegistered(_ broker: RunningBroker, sessions: Int, for duration: TimeInterval) -> Bool {
        // Stayed: no look in `duration` found another count.
        !eventually(timeout: .milliseconds(Int(duration * 1000))) {
            broker.broker.snapshot.services.first(where: { $0.name == service })?.workers != sessions
        }
    }

    static func pool(_ broker: RunningBroker, heartbeat: Heartbeat, dialect: MDPDialect, context: Context) throws -> ComponentThread {
        var configuration = WorkerConfiguration(heartbeat: heartbeat, reconnectInitialDelay: .milliseconds(50))
        configuration.dialect = dialect
        let pool = try WorkerPool(endpoint: broker.endpoint, service: service, sessions: 2, configuration: configuration, context: context) { body, _, _ in body }
        return ComponentThread(pool, name: "patient-pool")
    }

    @Test(arguments: [MDPDialect.mdp7, .majortomo])
    func aSlowerWorkerWithinTheBrokersExpiryStaysRegistered(_ dialect: MDPDialect) throws {
        let context = try Context()
        let broker = try RunningBroker(BrokerConfiguration(heartbeat: Self.brokerHeartbeat), context: context)
        defer { broker.stop() }
        // 600 ms < the broker's 1 s expiry; the broker's 250 ms < the worker's 12 s.
        let thread = try Self.pool(broker, heartbeat: Heartbeat(interval: .milliseconds(600), liveness: 20), dialect: dialect, context: context)
        defer { thread.stop() }
        #expect(eventually { broker.broker.snapshot.services.first { $0.name == Self.service }?.workers == 2 })
        #expect(Self.stayedRegistered(broker, sessions: 2, for: 4), "a session was purged and registered again")
        let client = quickClient(broker.endpoint, context: context, timeout: .seconds(5), attempts: 1)
        #expect(try client.call(Self.service, body: [bytes("still here")]) == [bytes("still here")])
    }

    @Test func aWorkerSlowerThanTheBrokersExpiryIsPurgedAndRegistersAgain() throws {
        let context = try Context()
        let broker = try RunningBroker(BrokerConfiguration(heartbeat: Self.brokerHeartbeat), context: context)
        defer { broker.stop() }
        // 1.5 s > the broker's 1 s expiry: the control that shows the test above can see a purge.
        let thread = try Self.pool(broker, heartbeat: Heartbeat(interval: .milliseconds(1500), liveness: 20), dialect: .majortomo, context: context)
        defer { thread.stop() }
        #expect(eventually { broker.broker.snapshot.services.first { $0.name == Self.service }?.workers == 2 })
        #expect(!Self.stayedRegistered(broker, sessions: 2, for: 4), "the broker kept workers silent past its expiry")
        #expect(eventually { broker.broker.snapshot.services.first { $0.name == Self.service }?.workers == 2 }, "registered again")
    }
}
