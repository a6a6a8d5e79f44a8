import Foundation
import LyceumSupport
import Testing

/// The one condition primitive: a waiter wakes for another thread's change, a deadline ends a
/// wait that nothing satisfies, and the lock makes read-modify-writes of many threads whole.
struct MonitorTests {
    @Test func aWaiterWakesWhenAnotherThreadMakesItsConditionTrue() {
        let queue = Monitor<[Int]>([])
        let producer = Thread {
            for value in 1...100 { queue.update { $0.append(value) } }
        }
        producer.start()
        let taken = queue.wait(until: { $0.count == 100 }) { values, isReady in isReady ? values : [] }
        #expect(taken == Array(1...100))
    }

    @Test func aDeadlineEndsAWaitThatNothingSatisfies() {
        let flag = Monitor(false)
        #expect(!flag.wait(until: { $0 }, deadline: .now + .milliseconds(20)))
        let outcome = flag.wait(until: { $0 }, deadline: .now + .milliseconds(20)) { _, isReady in isReady }
        #expect(!outcome)
    }

    @Test func aConditionTrueAlreadyNeedsNoWakeUp() {
        let flag = Monitor(true)
        #expect(flag.wait(until: { $0 }, deadline: .now - .seconds(1)))
    }

    @Test func incrementsFromManyThreadsAreNeverLost() {
        let counter = Monitor(0)
        let finished = Monitor(0)
        for _ in 0..<8 {
            Thread {
                for _ in 0..<10_000 { counter.withLock { $0 += 1 } }
                finished.update { $0 += 1 }
            }.start()
        }
        finished.wait(until: { $0 == 8 })
        #expect(counter.withLock { $0 } == 80_000)
    }
}
