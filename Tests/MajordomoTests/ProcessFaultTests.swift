import LyceumTestSupport
import Foundation
import Majordomo
import Synchronization
import Testing
import ZeroMQ

/// Faults with real processes: mdp-peer brokers and workers killed, restarted and left idle.
@Suite(.serialized) struct ProcessFaultTests {
    static let fast = ["--heartbeat-ms", "100", "--liveness", "3"]

    static func startBroker(_ endpoint: String = "tcp://127.0.0.1:*", extra: [String] = []) throws -> (ChildProcess, String) {
        let broker = try ChildProcess.peer(["broker", "--bind", endpoint] + fast + extra)
        let line = try #require(broker.waitForLine("bound "), "the broker did not bind \(endpoint)")
        return (broker, String(line.dropFirst("bound ".count)))
    }

    static func startWorker(_ endpoint: String, _ extra: [String] = []) throws -> ChildProcess {
        let worker = try ChildProcess.peer(["worker", "--connect", endpoint, "--service", "echo", "--reconnect-ms", "100", "--reconnect-max-ms", "400"] + fast + extra)
        #expect(worker.waitForLine("ready") != nil)
        return worker
    }

    @Test func killedBrokerRestartsAndWorkersRegisterAgain() throws {
        let context = try Context()
        var (broker, endpoint) = try Self.startBroker()
        defer { broker.stop() }
        let worker = try Self.startWorker(endpoint, ["--sessions", "2"])
        defer { worker.stop() }
        let client = Client(endpoint: endpoint, configuration: ClientConfiguration(timeout: .seconds(1), attempts: 5), context: context)
        #expect(try client.call("echo", body: [bytes("before")]) == [bytes("before")])

        broker.signal(SIGKILL)
        (broker, _) = try Self.startBroker(endpoint, extra: ["--unknown-service-ms", "3000"])
        let clock = ContinuousClock()
        let start = clock.now
        #expect(try client.call("echo", body: [bytes("after")]) == [bytes("after")])
        // Liveness × interval (300 ms) plus back-offs (100 + 200 ms) on an idle machine: a figure.
        print("the worker came back to the restarted broker; the call took \(clock.now - start)")
    }

    @Test func workerKilledMidRequestAndTheRetryGoesToAnother() throws {
        let context = try Context()
        let (broker, endpoint) = try Self.startBroker()
        defer { broker.stop() }
        let doomed = try Self.startWorker(endpoint, ["--delay-ms", "10000", "--announce", "--tag", "doomed"])
        defer { doomed.stop() }
        let client = AsyncClient(endpoint: endpoint, configuration: ClientConfiguration(timeout: .seconds(1), attempts: 3), context: context)
        let id = try client.send("echo", body: [bytes("important")])
        #expect(client.inFlight == 1)
        // Keep the client's socket serviced while the doomed worker picks the request up.
        _ = try client.receive(timeout: .milliseconds(50))
        #expect(doomed.waitForLine("serving") != nil)
        doomed.signal(SIGKILL)
        let survivor = try Self.startWorker(endpoint, ["--tag", "survivor"])
        defer { survivor.stop() }
        let completion = try #require(try client.receive(timeout: .seconds(5)))
        #expect(completion.id == id)
        #expect(try completion.result.get() == [bytes("important"), bytes("survivor")])
    }

    @Test func clientProcessThroughBrokerProcessToWorkerProcess() throws {
        let (broker, endpoint) = try Self.startBroker()
        defer { broker.stop() }
        let worker = try Self.startWorker(endpoint)
        defer { worker.stop() }
        let client = try ChildProcess.peer(["client", "--connect", endpoint, "--service", "echo", "--requests", "100"])
        defer { client.stop() }
        #expect(client.waitForExit() == 0)
        #expect(client.lines.last == "ok 100")

        let lost = try ChildProcess.peer(["client", "--connect", endpoint, "--service", "nobody", "--timeout-ms", "3000"])
        defer { lost.stop() }
        #expect(lost.waitForExit() == 1)
        #expect(lost.lines.last == "error service_unknown")
    }

    @Test func idleLongerThanTheExpiryKeepsWorkersRegistered() throws {
        let context = try Context()
        let (broker, endpoint) = try Self.startBroker()
        defer { broker.stop() }
        let worker = try Self.startWorker(endpoint)
        defer { worker.stop() }
        let client = quickClient(endpoint, context: context)
        #expect(try eventually { try client.isRegistered("echo") })
        // Five expiries of silence from clients; only heartbeats flow.
        pause(milliseconds: 1500)
        #expect(try client.isRegistered("echo"))
        #expect(try client.call("echo", body: [bytes("awake")]) == [bytes("awake")])
        #expect(worker.isRunning)
    }

    @Test func sigtermShutsAWorkerDownGracefully() throws {
        let context = try Context()
        // A 30 s expiry, so that only DISCONNECT can unregister the sessions within the 10 s
        // allowed (a loaded machine may need seconds where an idle one needs milliseconds).
        let slow = ["--heartbeat-ms", "10000"]
        let (broker, endpoint) = try Self.startBroker(extra: slow)
        defer { broker.stop() }
        let worker = try Self.startWorker(endpoint, ["--sessions", "3"] + slow)
        defer { worker.stop() }
        let client = quickClient(endpoint, context: context)
        #expect(try eventually { try client.isRegistered("echo") })
        kill(worker.processIdentifier, SIGTERM)
        #expect(worker.waitForExit() == 0)
        #expect(try eventually { try !client.isRegistered("echo") })
    }

    @Test func twentyClientsThreeWorkersEveryReplyMatches() throws {
        let context = try Context()
        let (broker, endpoint) = try Self.startBroker()
        defer { broker.stop() }
        let workers = try (0..<3).map { _ in try Self.startWorker(endpoint) }
        defer { for worker in workers { worker.stop() } }
        let probe = quickClient(endpoint, context: context)
        #expect(try eventually { try probe.isRegistered("echo") })

        let mismatches = Atomic<Int>(0)
        let failures = Atomic<Int>(0)
        let done = DispatchGroup()
        for clientIndex in 0..<20 {
            done.enter()
            Thread {
                defer { done.leave() }
                let client = Client(endpoint: endpoint, configuration: ClientConfiguration(timeout: .seconds(5)), context: context)
                for requestIndex in 0..<50 {
                    let body = [bytes("client \(clientIndex) request \(requestIndex)")]
                    do {
                        if try client.call("echo", body: body) != body { mismatches.add(1, ordering: .relaxed) }
                    } catch {
                        failures.add(1, ordering: .relaxed)
                    }
                }
                client.close()
            }.start()
        }
        #expect(done.wait(timeout: .now() + 60) == .success)
        #expect(mismatches.load(ordering: .relaxed) == 0)
        #expect(failures.load(ordering: .relaxed) == 0)
    }
}
