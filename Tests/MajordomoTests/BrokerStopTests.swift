import LyceumLifecycle
import LyceumTestSupport
import Majordomo
import Testing
import ZeroMQ

/// A broker that stops (protocol/majordomo.md, *A broker that stops*): it refuses every new
/// request with `service_unknown` at once, so that clients go to another broker, while it still
/// routes the reply to the request its worker has in hand; then it disconnects its workers.
@Suite struct BrokerStopTests {
    @Test func aStoppingBrokerAnswersTheRequestInHandAndRefusesNewOnes() throws {
        let context = try Context()
        let broker = try RunningBroker(BrokerConfiguration(heartbeat: BrokerRequeueTests.slowHeartbeat), context: context)
        let worker = try BrokerRequeueTests.registerRawWorker(broker, context: context, workers: 1)
        defer { worker.close() }
        let client = BrokerRequeueTests.patientClient(broker, context: context)
        let inHand = try client.send(BrokerRequeueTests.service, body: [bytes("first")])
        let request = try #require(try BrokerRequeueTests.nextRequest(worker))

        broker.thread.shutdown()
        // Queued behind the request in hand or refused on arrival: either way refused at once.
        let late = try client.send(BrokerRequeueTests.service, body: [bytes("second")])
        let refused = try #require(try client.receive(timeout: .seconds(30)))
        #expect(refused.id == late)
        #expect(throws: MajordomoError.self) { try refused.result.get() }
        if case .failure(let error) = refused.result {
            #expect(error.code == .serviceUnknown && error.detail.contains("stopping"), "\(error)")
        }

        try BrokerRequeueTests.reply(from: worker, to: request.address, bytes("answered"))
        let answered = try #require(try client.receive(timeout: .seconds(30)))
        #expect(answered.id == inHand)
        #expect(try answered.result.get() == [bytes("answered")])
        #expect(broker.thread.join() == nil)
        let disconnect = try receive(worker, timeout: .seconds(10)) { $0.count >= 3 && $0[2] == [0x05] }
        #expect(disconnect != nil, "the worker got no DISCONNECT")
    }
}
