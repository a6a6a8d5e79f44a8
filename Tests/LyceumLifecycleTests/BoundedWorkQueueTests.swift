import Foundation
import LyceumLifecycle
import LyceumTestSupport
import Synchronization
import Testing

@Suite("BoundedWorkQueue")
struct BoundedWorkQueueTests {
    /// What the jobs did, in order: each job's number, whether it was told the queue stops, and its thread.
    final class Record: Sendable {
        let entries = Mutex<[(job: Int, stopping: Bool, thread: String)]>([])
        func note(_ job: Int, _ stopping: Bool) { entries.withLock { $0.append((job, stopping, Thread.current.name ?? "")) } }
    }

    /// A job that holds the queue's thread until `release` opens, once it has opened `holding`.
    static func holdingJob(_ holding: Gate, until release: Gate, _ record: Record) -> BoundedWorkQueue.Job {
        { stopping in
            holding.open()
            release.wait()
            record.note(0, stopping)
        }
    }

    @Test("jobs run on the queue's thread, oldest first; a full queue takes nothing and says so at once")
    func jobsRunInOrderOnTheQueueThreadAndAFullQueueRefuses() throws {
        let queue = BoundedWorkQueue(capacity: 2)
        #expect(queue.submit { _ in } == .notStarted)
        let thread = ComponentThread(queue, name: "work-queue")
        defer { thread.stop() }
        try queue.waitUntilRunning(timeout: .seconds(120))
        let record = Record()
        // The first job holds the thread, so that the next two wait and the fourth finds the queue full.
        let (release, holding, done) = (Gate(), Gate(), Gate())
        #expect(queue.submit(Self.holdingJob(holding, until: release, record)) == .queued)
        #expect(holding.wait())
        #expect(queue.submit { record.note(1, $0) } == .queued)
        #expect(queue.submit { record.note(2, $0); done.open() } == .queued)
        #expect(queue.submit { record.note(3, $0) } == .full)
        release.open()
        #expect(done.wait())
        let entries = record.entries.withLock { $0 }
        #expect(entries.map(\.job) == [0, 1, 2] && entries.allSatisfy { !$0.stopping })
        #expect(entries.allSatisfy { $0.thread == "work-queue" }, "\(entries)")
    }

    @Test("a stop lets the running job finish and tells the waiting ones, in order, then the queue takes nothing")
    func aStopFinishesTheRunningJobAndTellsTheWaitingOnes() throws {
        let queue = BoundedWorkQueue(capacity: 8)
        let thread = ComponentThread(queue, name: "work-queue")
        try queue.waitUntilRunning(timeout: .seconds(120))
        let record = Record()
        let (release, holding) = (Gate(), Gate())
        #expect(queue.submit(Self.holdingJob(holding, until: release, record)) == .queued)
        #expect(holding.wait())
        for job in 1...5 { #expect(queue.submit { record.note(job, $0) } == .queued) }
        queue.shutdown()
        #expect(queue.submit { record.note(6, $0) } == .stopped)
        release.open()
        // join() returns once run() has: every job told, no thread left behind.
        #expect(thread.join() == nil)
        #expect(thread.hasFinished)
        let entries = record.entries.withLock { $0 }
        #expect(entries.map(\.job) == [0, 1, 2, 3, 4, 5])
        // The running job had started before the stop; the waiting ones are told.
        #expect(entries.map(\.stopping) == [false, true, true, true, true, true])
        #expect(queue.submit { _ in } == .stopped)
    }
}
