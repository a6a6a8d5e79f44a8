import Dispatch
import Lifecycle
import Majordomo
import Synchronization

/// A broker and the workers that reach it in-process, run as one service so that stopping
/// drains in order: the workers finish and reply to the requests in hand while the broker still
/// routes those replies, and only then does the broker stop (sending DISCONNECT to whatever is
/// left). If any part stops by itself, the whole stops.
final class DrainingBroker: Service {
    private let broker: Broker
    private let workers: [(name: String, service: any Service)]
    private let stopRequested = DispatchSemaphore(value: 0)

    init(broker: Broker, workers: [(name: String, service: any Service)]) {
        self.broker = broker
        self.workers = workers
    }

    /// Runs the broker and the workers on threads of their own until `shutdown()` or until one
    /// of them stops; throws the first error any of them ended with.
    func run() throws {
        let firstError = Mutex<(any Error)?>(nil)
        let onExit: @Sendable ((any Error)?) -> Void = { [stopRequested] error in
            firstError.withLock { $0 = $0 ?? error }
            stopRequested.signal()
        }
        let brokerThread = ServiceThread(broker, name: "broker", onExit: onExit)
        let workerThreads = workers.map { ServiceThread($0.service, name: $0.name, onExit: onExit) }
        stopRequested.wait()
        for thread in workerThreads { thread.service.shutdown() }
        for thread in workerThreads { thread.join() }
        brokerThread.stop()
        if let error = firstError.withLock({ $0 }) { throw error }
    }

    /// Starts the drain; `run()` returns once the broker has stopped.
    func shutdown() { stopRequested.signal() }
}
