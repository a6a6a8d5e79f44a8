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

    @Test func aBoundedQueueHandsEveryItemOverWhenBothSidesWaitAndWake() {
        let queue = Monitor<[Int]>([])
        let received = Monitor<[Int]>([])
        Thread {
            for _ in 1...1000 {
                // Taking an item wakes the producer waiting for room.
                let item = queue.update(when: { !$0.isEmpty }) { items, _ in items.removeFirst() }
                received.update { $0.append(item) }
            }
        }.start()
        for item in 1...1000 {
            queue.update(when: { $0.count < 4 }) { items, _ in items.append(item) }
        }
        received.wait(until: { $0.count == 1000 })
        #expect(received.withLock { $0 } == Array(1...1000))
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
