import Foundation
import LyceumLifecycle
import Majordomo
import Testing
import ZeroMQ
import Synchronization

/// Heartbeats fast enough that expiry and reconnection tests take a fraction of a second.
let fastHeartbeat = Heartbeat(interval: .milliseconds(100), liveness: 3)

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// A broker on a free loopback port, running on its own thread until `stop()`.
final class RunningBroker {
    let broker: Broker
    let thread: ComponentThread
    let endpoint: String

    init(_ configuration: BrokerConfiguration = BrokerConfiguration(heartbeat: fastHeartbeat), context: Context,
         endpoint: String = "tcp://127.0.0.1:*") throws {
        broker = try Broker(endpoints: [endpoint], configuration: configuration, context: context)
        thread = ComponentThread(broker, name: "test-broker")
        self.endpoint = try broker.waitUntilBound()[0]
    }

    func stop() { thread.stop() }
}

/// Echo worker sessions on threads of their own.
final class RunningWorkers {
    let threads: [ComponentThread]

    init(_ count: Int = 1, endpoint: String, service: String = "echo",
         configuration: WorkerConfiguration = WorkerConfiguration(heartbeat: fastHeartbeat, reconnectInitialDelay: .milliseconds(50)),
         context: Context, handler: @escaping WorkerSession.Handler = { $0 }) throws {
        threads = try (0..<count).map { index in
            let session = try WorkerSession(endpoint: endpoint, service: service, configuration: configuration,
                                            context: context, handler: handler)
            return ComponentThread(session, name: "test-worker-\(index)")
        }
    }

    func stop() {
        for thread in threads { thread.shutdown() }
        for thread in threads { thread.join() }
    }
}

/// Waits up to `timeout` for a multipart message on a raw socket.
func receive(_ socket: Socket, timeout: Duration = .seconds(3)) throws -> [[UInt8]]? {
    var poller = Poller()
    try poller.add(socket)
    guard try poller.poll(timeout: timeout) > 0 else { return nil }
    return try socket.receiveMultipart(options: .dontWait)
}

/// Receives messages until one matches, dropping the others (such as heartbeats).
func receive(_ socket: Socket, timeout: Duration = .seconds(3), until matches: ([[UInt8]]) -> Bool) throws -> [[UInt8]]? {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        guard let frames = try receive(socket, timeout: deadline - ContinuousClock.now) else { return nil }
        if matches(frames) { return frames }
    }
    return nil
}

/// A client with short timeouts, for tests.
func quickClient(_ endpoint: String, context: Context, timeout: Duration = .milliseconds(1500), attempts: Int = 2) -> Client {
    Client(endpoint: endpoint, configuration: ClientConfiguration(timeout: timeout, attempts: attempts), context: context)
}

func pause(milliseconds: Int) { Thread.sleep(forTimeInterval: Double(milliseconds) / 1000) }

/// A value handed between a test and a thread it started.
final class Locked<Value: Sendable>: Sendable {
    private let value: Mutex<Value>

    init(_ value: Value) { self.value = Mutex(value) }
    func set(_ newValue: Value) { value.withLock { $0 = newValue } }
    func get() -> Value { value.withLock { $0 } }
    /// Changes the value in place: a read and a write no other thread's can come between.
    func modify(_ change: (inout Value) -> Void) { value.withLock { change(&$0) } }
}
