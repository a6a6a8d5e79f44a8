import LyceumTestSupport
import Majordomo
import Testing
import ZeroMQ

/// Interoperation with an MDP client and worker written in Python from the RFC alone.
@Suite(.enabled(if: pythonHasZMQ, "needs python3-zmq: run scripts/ensure-deps.sh test"))
struct PythonPeerTests {
    @Test func pythonClientThroughLyceumBrokerToLyceumWorker() throws {
        let context = try Context()
        let broker = try RunningBroker(context: context)
        defer { broker.stop() }
        let workers = try RunningWorkers(2, endpoint: broker.endpoint, context: context)
        defer { workers.stop() }
        let client = try ChildProcess.python(["client", broker.endpoint, "echo", "200"])
        defer { client.stop() }
        #expect(client.waitForExit() == 0)
        #expect(client.lines.last == "ok 200")
    }

    @Test func lyceumClientThroughLyceumBrokerToPythonWorker() throws {
        let context = try Context()
        let broker = try RunningBroker(context: context)
        defer { broker.stop() }
        let worker = try ChildProcess.python(["worker", broker.endpoint, "python-echo"])
        defer { worker.stop() }
        #expect(worker.waitForLine("ready") != nil)
        let client = quickClient(broker.endpoint, context: context, timeout: .seconds(3))
        #expect(try eventually { try client.isRegistered("python-echo") })
        for index in 0..<100 {
            let body = [bytes("swift \(index)"), [0x00, UInt8(index)]]
            #expect(try client.call("python-echo", body: body) == [bytes("py")] + body)
        }
        // The Python worker heartbeats: it is still registered after several expiries.
        pause(milliseconds: 800)
        #expect(try client.isRegistered("python-echo"))
        #expect(worker.isRunning)
    }
}
