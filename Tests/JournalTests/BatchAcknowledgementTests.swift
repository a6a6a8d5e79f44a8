import Foundation
@testable import Journal
import LyceumLifecycle
import Synchronization
import Testing

/// `whenDurable` from a thread that runs a `BatchedSignals` batch, as the broker's and the worker
/// pools' loops do: one sync at the end of the batch, on that thread, then the callbacks; or, after
/// a slow sync, the whole batch handed to the acknowledger thread.
@Suite struct BatchAcknowledgementTests {
    /// Options whose syncs never count as slow, so that every batch syncs on its own thread
    /// whatever the machine's load.
    private static let syncingOnTheLoop: JournalOptions = {
        var options = JournalOptions(durability: .always)
        options.loopSyncLimit = .seconds(3600)
        return options
    }()

    @Test func aBatchsCallbacksRunAtItsEndOnItsThreadAfterOneSync() throws {
        try withTemporaryDirectory { directory in
            var state = KeyedJournalState()
            let journal = try Journal.open(directory: directory, options: Self.syncingOnTheLoop, state: &state)
            defer { journal.close() }
            let recorder = AcknowledgementRecorder(journal: journal)
            let caller = pthread_self()
            let syncsBefore = journal.statistics.syncs
            let ranInside = try BatchedSignals.run { () throws -> Int in
                for number in 0..<50 {
                    try journal.append([.put("books", key: "b\(number)", value: bookValue(number))]).whenDurable { acknowledgement in
                        recorder.record(acknowledgement, onCaller: pthread_equal(pthread_self(), caller) != 0)
                    }
                }
                return recorder.calls.count
            }
            #expect(ranInside == 0, "a callback ran before its batch ended")
            let calls = recorder.calls
            #expect(calls.map(\.sequence) == Array(1...50))
            #expect(calls.allSatisfy { $0.onCaller }, "a batch's callbacks run on the batch's thread")
            #expect(calls.allSatisfy { $0.durableAtCall >= $0.sequence }, "a callback ran before its record was synced")
            #expect(journal.statistics.syncs == syncsBefore + 1, "one sync for the whole batch")

            try BatchedSignals.run { () throws in
                try journal.append([.put("books", key: "next", value: bookValue(50))]).whenDurable { acknowledgement in
                    recorder.record(acknowledgement, onCaller: pthread_equal(pthread_self(), caller) != 0)
                }
            }
            #expect(recorder.calls.map(\.sequence).last == 51)
            #expect(journal.statistics.syncs == syncsBefore + 2, "the next batch syncs again")
        }
    }

    /// Callbacks that write again (each client's next write from its previous acknowledgement)
    /// are served in rounds of the same loop, not in nested batches: 10 clients × 300 rounds
    /// would otherwise nest 300 deep.
    @Test func callbacksThatWriteAgainAreServedInRoundsToTheEnd() throws {
        try withTemporaryDirectory { directory in
            var state = KeyedJournalState()
            let journal = try Journal.open(directory: directory, options: Self.syncingOnTheLoop, state: &state)
            defer { journal.close() }
            let recorder = AcknowledgementRecorder(journal: journal)
            BatchedSignals.run {
                for client in 0..<10 {
                    ClosedLoopClient(journal: journal, client: client, rounds: 300, recorder: recorder).next(0)
                }
            }
            let calls = recorder.calls
            #expect(calls.count == 3000, "every write is acknowledged once the first batch ends")
            #expect(calls.map(\.sequence) == Array(1...3000))
            #expect(calls.allSatisfy { $0.durableAtCall >= $0.sequence })
            #expect(journal.statistics.syncs <= 300, "a round's writes share one sync")
        }
    }

    /// `close()` inside a batch runs its queued callbacks; a callback registered afterwards runs at
    /// once, on its caller's thread, as outside a batch.
    @Test func closeInsideABatchRunsItsQueuedCallbacks() throws {
        try withTemporaryDirectory { directory in
            var state = KeyedJournalState()
            let journal = try Journal.open(directory: directory, options: Self.syncingOnTheLoop, state: &state)
            let recorder = AcknowledgementRecorder(journal: journal)
            try BatchedSignals.run { () throws in
                let pending = try journal.append([.put("books", key: "b", value: bookValue(1))])
                pending.whenDurable { recorder.record($0, onCaller: true) }
                journal.close()
                #expect(recorder.calls.map(\.sequence) == [1], "close() ran the batch's waiting callback")
                pending.whenDurable { recorder.record($0, onCaller: true) }
                #expect(recorder.calls.count == 2, "after close(), a callback runs at once")
            }
            #expect(recorder.calls.count == 2, "the batch's end ran nothing twice")
        }
    }

    /// With a limit no sync can meet, the first batch syncs on its thread (no sync was slow yet)
    /// and the next one is handed whole to the acknowledger thread: its callbacks run there, after
    /// the batch, after a sync that covers them, in order, once each.
    @Test func afterASlowSyncABatchGoesToTheAcknowledgerThread() throws {
        try withTemporaryDirectory { directory in
            var options = JournalOptions(durability: .always)
            options.loopSyncLimit = .zero
            var state = KeyedJournalState()
            let journal = try Journal.open(directory: directory, options: options, state: &state)
            defer { journal.close() }
            let recorder = AcknowledgementRecorder(journal: journal)
            let caller = pthread_self()
            for batch in 0..<2 {
                try BatchedSignals.run { () throws in
                    for number in 0..<20 {
                        try journal.append([.put("books", key: "b\(batch)-\(number)", value: bookValue(number))]).whenDurable { acknowledgement in
                            recorder.record(acknowledgement, onCaller: pthread_equal(pthread_self(), caller) != 0)
                        }
                    }
                }
            }
            try recorder.waitForCount(40)
            let calls = recorder.calls
            #expect(calls.map(\.sequence) == Array(1...40))
            #expect(calls.allSatisfy { $0.durableAtCall >= $0.sequence }, "a callback ran before its record was synced")
            #expect(calls.prefix(20).allSatisfy { $0.onCaller }, "the first batch syncs on its own thread")
            #expect(calls.suffix(20).allSatisfy { !$0.onCaller }, "after a slow sync the batch goes to the acknowledger thread")
        }
    }
}
