import Foundation
import LyceumLifecycle
import Synchronization
import Testing

@Suite("BoundedWorkQueue")
struct BoundedWorkQueueTests {
    /// Hangs are bounded in minutes (the house rule: tests never assert seconds).
    static var hangLimit: DispatchTime { .now() + 120 }

    /// What the jobs did, in order, and on which thread.
    final class Record: Sendable {
        let entries = Mutex<[(job: Int, thread: String)]>([])
        func note(_ job: Int) { entries.withLock { $0.append((job, Thread.current.name ?? "")) } }
    }

    @Test("jobs run on the queue's thread, oldest first; a full queue takes nothing and says so at once")
    func jobsRunInOrderOnTheQueueThreadAndAFullQueueRefuses() throws {
        let queue = BoundedWorkQueue(capacity: 2)
        let thread = ComponentThread(queue, name: "work-queue")
        defer { thread.stop() }
        try queue.waitUntilReady(timeout: .seconds(60))
        let record = Record()
        // The first job holds the thread, so that the next two wait and the fourth finds the queue full.
        let release = DispatchSemaphore(value: 0)
        let holding = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        #expect(queue.submit { holding.signal(); release.wait(); record.note(0) } == .queued)
        #expect(holding.wait(timeout: Self.hangLimit) == .success)
        #expect(queue.submit { record.note(1) } == .queued)
        #expect(queue.submit { record.note(2); done.signal() } == .queued)
        #expect(queue.submit { record.note(3) } == .full)
        release.signal()
        #expect(done.wait(timeout: Self.hangLimit) == .success)
        let entries = record.entries.withLock { $0 }
        #expect(entries.map(\.job) == [0, 1, 2])
        #expect(entries.allSatisfy { $0.thread == "work-queue" }, "\(entries)")
    }

    @Test("before run() and after it returned the queue takes nothing; a stop first runs the jobs still queued")
    func aStoppedQueueRunsWhatItHoldsThenTakesNothing() throws {
        let queue = BoundedWorkQueue(capacity: 8)
        #expect(queue.submit {} == .notRunning)
        let thread = ComponentThread(queue, name: "work-queue")
        try queue.waitUntilReady(timeout: .seconds(60))
        let record = Record()
        let release = DispatchSemaphore(value: 0)
        let holding = DispatchSemaphore(value: 0)
        #expect(queue.submit { holding.signal(); release.wait(); record.note(0) } == .queued)
        #expect(holding.wait(timeout: Self.hangLimit) == .success)
        for job in 1...5 { #expect(queue.submit { record.note(job) } == .queued) }
        queue.shutdown()
        release.signal()
        // join() returns once run() has: with every queued job done, and no thread left behind.
        #expect(thread.join() == nil)
        #expect(thread.hasFinished)
        #expect(record.entries.withLock { $0.map(\.job) } == [0, 1, 2, 3, 4, 5])
        #expect(queue.submit {} == .notRunning)
    }
}
