import LyceumLifecycle
import LyceumTestSupport
import Majordomo
import Testing
import ZeroMQ

/// A raw ROUTER "broker" that answers every READY with DISCONNECT at once: the worker's
/// reconnection back-off must keep doubling, since such a broker never accepted a session.
///
/// Only lower bounds on the gaps are asserted (a timer never fires early), so a slow machine can
/// make the test slower but not wrong; on the code that reset the back-off on any message the
/// gaps all stayed at the initial delay.
@Suite struct WorkerBackOffTests {
    static let initialDelay = Duration.milliseconds(150)
    static let configuration = WorkerConfiguration(
        heartbeat: fastHeartbeat, reconnectInitialDelay: initialDelay, reconnectMaximumDelay: .seconds(30))

    /// Receives `count` READYs, refusing each with DISCONNECT; returns when each arrived.
    static func refuse(_ count: Int, on router: Socket) throws -> [ContinuousClock.Instant] {
        var arrivals: [ContinuousClock.Instant] = []
        while arrivals.count < count {
            let ready = try #require(try receive(router, timeout: .seconds(20)) { WorkerConformanceTests.isReady($0) })
            arrivals.append(.now)
            try router.send(multipart: [ready[0], [], bytes("MDPW01"), [0x05]])
        }
        return arrivals
    }

    @Test func aSessionRefusedAtOnceWaitsLongerEachTime() throws {
        let context = try Context()
        let (router, endpoint) = try WorkerConformanceTests.rawBroker(context)
        let workers = try RunningWorkers(endpoint: endpoint, configuration: Self.configuration, context: context)
        defer { workers.stop() }
        let arrivals = try Self.refuse(5, on: router)
        let gaps = zip(arrivals.dropFirst(), arrivals).map { $0 - $1 }
        // Back-offs of 150, 300, 600 and 1200 ms; allow 10 % for clock granularity.
        for (index, gap) in gaps.enumerated() {
            let promised = Self.initialDelay * (1 << index)
            #expect(gap >= promised * 0.9, "gap \(index) was \(gap), the back-off promised at least \(promised)")
        }
    }

    @Test func everySessionOfAPoolRefusedAtOnceWaitsLongerEachTime() throws {
        let context = try Context()
        let (router, endpoint) = try WorkerConformanceTests.rawBroker(context)
        let pool = try WorkerPool(
            endpoint: endpoint, service: "echo", sessions: 2, configuration: Self.configuration, context: context
        ) { body, _, _ in body }
        let thread = ComponentThread(pool, name: "test-pool")
        defer { thread.stop() }
        // Each session sends READYs at 0, 150, 450, 1050 and 2250 ms of its own time; the two
        // sessions start together, so the tenth READY comes at least 2250 ms after the first.
        let arrivals = try Self.refuse(10, on: router)
        let span = arrivals[9] - arrivals[0]
        #expect(span >= Self.initialDelay * 15 * 0.9, "ten READYs of two sessions came within \(span)")
    }
}
