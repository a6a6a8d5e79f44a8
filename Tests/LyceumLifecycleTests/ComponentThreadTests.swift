import Foundation
import LyceumLifecycle
import Synchronization
import Testing

@Suite("ComponentThread")
struct ComponentThreadTests {
    /// A service that runs until asked to stop.
    final class Waiting: Component {
        private let stopped = Mutex(false)
        func run() {
            while !stopped.withLock({ $0 }) { Thread.sleep(forTimeInterval: 0.001) }
        }
        func shutdown() { stopped.withLock { $0 = true } }
    }

    @Test("once run() has returned the thread holds the service no longer, so its release (and its context's) comes before join() returns")
    func theServiceIsReleasedBeforeJoinReturns() {
        weak var probe: Waiting?
        let thread: ComponentThread = {
            let service = Waiting()
            probe = service
            return ComponentThread(service, name: "waiting")
        }()
        #expect(probe != nil)
        thread.stop()
        // The ComponentThread itself is still here (and Foundation may hold its closure).
        #expect(probe == nil)
        withExtendedLifetime(thread) {}
    }
}
