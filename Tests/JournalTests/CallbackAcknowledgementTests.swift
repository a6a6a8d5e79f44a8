import Foundation
import LyceumSupport
import LyceumTestSupport
@testable import Journal
import Synchronization
import Testing

/// `PendingWrite.whenDurable`: callbacks instead of blocked threads, sharing the journal's syncs.
@Suite struct CallbackAcknowledgementTests {
    @Test func underAlwaysCallbacksRunOnTheAcknowledgerAfterASyncInOrderAndOnce() throws {
        try withTemporaryDirectory { directory in
            var state = KeyedJournalState()
            let journal = try Journal.open(directory: directory, options: JournalOptions(durability: .always), state: &state)
            defer { journal.close() }
            let recorder = AcknowledgementRecorder(journal: journal)
            let caller = pthread_self()
            for number in 0..<100 {
                try journal.append([.put("books", key: "b\(number)", value: bookValue(number))]).whenDurable { acknowledgement in
                    recorder.record(acknowledgement, onCaller: pthread_equal(pthread_self(), caller) != 0)
                }
            }
            try recorder.waitForCount(100)
            let calls = recorder.calls
            #expect(calls.map(\.sequence) == Array(1...100))
            #expect(calls.allSatisfy { $0.durableAtCall >= $0.sequence }, "a callback ran before its record was synced")
            #expect(calls.allSatisfy { $0.syncsAtCall >= 1 })
            #expect(calls.allSatisfy { !$0.onCaller }, "under always, callbacks run on the acknowledger thread")
            #expect(journal.statistics.syncs <= 100)
        }
    }

    /// 200 writes from eight threads, registered while the acknowledger is busy (its first
    /// callback is held back): the next sync acknowledges all of them at once.
    @Test func twoHundredConcurrentCallbacksShareOneSync() throws {
        try withTemporaryDirectory { directory in
            var state = KeyedJournalState()
            let journal = try Journal.open(directory: directory, options: JournalOptions(durability: .always), state: &state)
            defer { journal.close() }
            let recorder = AcknowledgementRecorder(journal: journal)
            let (entered, gate) = (Gate(), Gate())
            try journal.append([.put("books", key: "gate", value: bookValue(0))]).whenDurable { _ in
                entered.open()
                gate.wait()
            }
            entered.wait()
            DispatchQueue.concurrentPerform(iterations: 8) { writer in
                for number in 0..<25 {
                    do {
                        try journal.append([.put("books", key: "w\(writer)-\(number)", value: bookValue(number))]).whenDurable {
                            recorder.record($0, onCaller: false)
                        }
                    } catch {
                        Issue.record("\(error)")
                    }
                }
            }
            gate.open()
            try recorder.waitForCount(200)
            let statistics = journal.statistics
            #expect(statistics.appends == 201)
            #expect(statistics.syncs == 2, "one for the gate's record, one for the 200 written meanwhile: \(statistics)")
            #expect(recorder.calls.map(\.sequence) == Array(2...201), "callbacks acknowledged together run in sequence order")
            #expect(recorder.calls.allSatisfy { $0.durableAtCall >= $0.sequence })
        }
    }

    /// 50 clients, each with one write in flight that it renews from its acknowledgement (the
    /// benchmark's durable-write pattern): about one sync per round of 50, not one per write.
    @Test func fiftyWritesInFlightAreAcknowledgedByFewSyncs() throws {
        try withTemporaryDirectory { directory in
            var state = KeyedJournalState()
            let journal = try Journal.open(directory: directory, options: JournalOptions(durability: .always), state: &state)
            defer { journal.close() }
            let recorder = AcknowledgementRecorder(journal: journal)
            let rounds = 8
            for client in 0..<50 {
                ClosedLoopClient(journal: journal, client: client, rounds: rounds, recorder: recorder).next(0)
            }
            try recorder.waitForCount(50 * rounds)
            let statistics = journal.statistics
            #expect(statistics.appends == UInt64(50 * rounds))
            #expect(statistics.syncs < statistics.appends / 4, "\(statistics)")
        }
    }

    /// One tracker serves both forms: a record a blocking waiter synced is acknowledged to a
    /// callback without another sync, and the other way round.
    @Test func blockingWaitersAndCallbacksShareSyncs() throws {
        try withTemporaryDirectory { directory in
            var state = KeyedJournalState()
            let journal = try Journal.open(directory: directory, options: JournalOptions(durability: .always), state: &state)
            defer { journal.close() }
            let recorder = AcknowledgementRecorder(journal: journal)
            let first = try journal.append([.put("books", key: "b1", value: bookValue(1))])
            _ = try first.waitUntilDurable()
            #expect(journal.statistics.syncs == 1)
            first.whenDurable { recorder.record($0, onCaller: false) }
            try recorder.waitForCount(1)
            #expect(journal.statistics.syncs == 1)

            let second = try journal.append([.put("books", key: "b2", value: bookValue(2))])
            second.whenDurable { recorder.record($0, onCaller: false) }
            try recorder.waitForCount(2)
            #expect(journal.statistics.syncs == 2)
            #expect(try second.waitUntilDurable().sequence == 2)
            #expect(journal.statistics.syncs == 2)

            // Both forms at once from several threads: everything acknowledged, syncs shared.
            let guarded = Mutex(state)
            DispatchQueue.concurrentPerform(iterations: 8) { writer in
                for number in 0..<25 {
                    let change = JournalChange.put("books", key: "w\(writer)-\(number)", value: bookValue(number))
                    do {
                        let pending = try guarded.withLock { state in
                            let pending = try journal.append([change])
                            state.apply(change)
                            return pending
                        }
                        if writer.isMultiple(of: 2) {
                            _ = try pending.waitUntilDurable()
                        } else {
                            pending.whenDurable { recorder.record($0, onCaller: false) }
                        }
                    } catch {
                        Issue.record("\(error)")
                    }
                }
            }
            try recorder.waitForCount(102)
            #expect(journal.statistics.syncs < journal.statistics.appends, "\(journal.statistics)")
            #expect(recorder.calls.allSatisfy { $0.durableAtCall >= $0.sequence })
        }
    }

    /// A callback that is still queued when `close()` starts runs after the final sync and before
    /// `close()` returns; one registered after `close()` runs at once on its caller's thread.
    @Test func closeRunsEveryOutstandingCallbackAfterItsFinalSync() throws {
        try withTemporaryDirectory { directory in
            var state = KeyedJournalState()
            let journal = try Journal.open(directory: directory, options: JournalOptions(durability: .always), state: &state)
            let recorder = AcknowledgementRecorder(journal: journal)
            let gate = Gate()
            try journal.append([.put("books", key: "first", value: bookValue(0))]).whenDurable {
                gate.wait()
                recorder.record($0, onCaller: false)
            }
            var late: PendingWrite?
            for number in 1...50 {
                let pending = try journal.append([.put("books", key: "b\(number)", value: bookValue(number))])
                if number == 50 {
                    late = pending
                } else {
                    pending.whenDurable { recorder.record($0, onCaller: false) }
                }
            }
            let closed = Mutex(false)
            let closing = Thread {
                journal.close()
                closed.withLock { $0 = true }
            }
            closing.start()
            usleep(50_000)
            #expect(!closed.withLock { $0 }, "close() returned while a callback was still outstanding")
            #expect(recorder.calls.isEmpty)
            gate.open()
            #expect(eventually { closed.withLock { $0 } })
            #expect(recorder.calls.map(\.sequence) == Array(1...50))
            #expect(recorder.calls.allSatisfy { $0.durableAtCall >= $0.sequence })

            let caller = pthread_self()
            let ranOnCaller = Mutex(false)
            try #require(late).whenDurable { acknowledgement in
                #expect(acknowledgement.sequence == 51)
                ranOnCaller.withLock { $0 = pthread_equal(pthread_self(), caller) != 0 }
            }
            #expect(ranOnCaller.withLock { $0 })
            #expect(try reopen(directory).lastSequence == 51)
        }
    }

    @Test func closingFromACallbackLetsTheRemainingCallbacksRun() throws {
        try withTemporaryDirectory { directory in
            var state = KeyedJournalState()
            let journal = try Journal.open(directory: directory, options: JournalOptions(durability: .always), state: &state)
            let recorder = AcknowledgementRecorder(journal: journal)
            // Every record is appended, and every callback registered, before the first closes
            // the journal: otherwise a fast acknowledger would close it under the test's appends.
            let pendings = try (0..<20).map { number in try journal.append([.put("books", key: "b\(number)", value: bookValue(number))]) }
            let allRegistered = Gate()
            for pending in pendings {
                pending.whenDurable { acknowledgement in
                    if acknowledgement.sequence == 1 {
                        allRegistered.wait()
                        journal.close()
                    }
                    recorder.record(acknowledgement, onCaller: false)
                }
            }
            allRegistered.open()
            try recorder.waitForCount(20)
            #expect(recorder.calls.map(\.sequence) == Array(1...20))
            #expect(journalError { _ = try journal.append([.put("books", key: "after", value: bookValue(1))]) }?.code == .closed)
        }
    }

    /// Queued callbacks keep their journal alive; once they have run, releasing the journal ends
    /// the acknowledger and frees the data directory.
    @Test func aReleasedJournalRunsItsCallbacksAndThenGoesAway() throws {
        try withTemporaryDirectory { directory in
            weak var released: Journal?
            let count = Mutex(0)
            do {
                var state = KeyedJournalState()
                let journal = try Journal.open(directory: directory, options: JournalOptions(durability: .always), state: &state)
                released = journal
                for number in 0..<30 {
                    try journal.append([.put("books", key: "b\(number)", value: bookValue(number))]).whenDurable { _ in
                        count.withLock { $0 += 1 }
                    }
                }
            }
            #expect(eventually { count.withLock { $0 } == 30 && released == nil })
            #expect(count.withLock { $0 } == 30)
            #expect(released == nil, "the journal outlived its last callback")
            #expect(try reopen(directory).state.liveCounts == ["books": 30])
        }
    }

    @Test(arguments: [DurabilityPolicy.none, .interval(milliseconds: 1000)])
    func otherPoliciesCallBackAtOnceOnTheCallersThread(_ policy: DurabilityPolicy) throws {
        try withTemporaryDirectory { directory in
            var state = KeyedJournalState()
            let journal = try Journal.open(directory: directory, options: JournalOptions(durability: policy), state: &state)
            defer { journal.close() }
            let caller = pthread_self()
            for number in 1...5 {
                let ranOnCaller = Mutex<Bool?>(nil)
                try journal.append([.put("books", key: "b\(number)", value: bookValue(number))]).whenDurable { acknowledgement in
                    #expect(acknowledgement.sequence == UInt64(number))
                    ranOnCaller.withLock { $0 = pthread_equal(pthread_self(), caller) != 0 }
                }
                #expect(ranOnCaller.withLock { $0 } == true)
            }
        }
    }
}

/// Collects acknowledgements with what the journal reported at the moment each callback ran.
final class AcknowledgementRecorder: Sendable {
    struct Call: Sendable {
        let sequence: UInt64
        let durableAtCall: UInt64
        let syncsAtCall: UInt64
        let onCaller: Bool
    }

    private let journal: Journal
    private let recorded = Mutex<[Call]>([])

    init(journal: Journal) { self.journal = journal }

    func record(_ acknowledgement: JournalAcknowledgement, onCaller: Bool) {
        let call = Call(
            sequence: acknowledgement.sequence, durableAtCall: journal.durability.durable,
            syncsAtCall: journal.statistics.syncs, onCaller: onCaller)
        recorded.withLock { $0.append(call) }
    }

    var calls: [Call] { recorded.withLock { $0 } }

    /// Waits until `count` callbacks have run; fails at the hang limit.
    func waitForCount(_ count: Int) throws {
        guard eventually({ calls.count >= count }) else {
            throw JournalError(.io, "only \(calls.count) of \(count) callbacks ran within the hang limit")
        }
        // Long enough for a callback run twice to show.
        usleep(10_000)
        #expect(calls.count == count, "a callback ran more than once")
    }
}

/// One client of the closed-loop test: appends its next write from the previous one's callback.
struct ClosedLoopClient: Sendable {
    let journal: Journal
    let client: Int
    let rounds: Int
    let recorder: AcknowledgementRecorder

    func next(_ round: Int) {
        guard round < rounds else { return }
        do {
            try journal.append([.put("books", key: "c\(client)-\(round)", value: bookValue(round))]).whenDurable { acknowledgement in
                recorder.record(acknowledgement, onCaller: false)
                next(round + 1)
            }
        } catch {
            Issue.record("\(error)")
        }
    }
}
