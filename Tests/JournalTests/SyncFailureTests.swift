@testable import DurableFiles
import Foundation
@testable import Journal
import LyceumLifecycle
import LyceumTestSupport
import Synchronization
import Testing

/// A journal whose fdatasync fails (EIO injected under its directory by `SyncFaults`): no record
/// the failed sync should have covered is acknowledged, each writer waiting is told so, no sync
/// is tried again, every later write is refused, and the file is cut back to where the last good
/// sync ended, so that reopening it replays exactly what was acknowledged.
@Suite struct SyncFailureTests {
    @Test func aFailedSyncIsNeverAcknowledgedNorRetriedAndTheFileIsCutBack() throws {
        try withTemporaryDirectory { directory in
            var state = KeyedJournalState()
            let journal = try Journal.open(directory: directory, options: JournalOptions(durability: .always), state: &state)
            for number in 1...3 {
                _ = try journal.append([.put("books", key: "b\(number)", value: bookValue(number))]).waitUntilDurable()
            }
            let synced = journal.size
            SyncFaults.fail(under: directory, errno: EIO)
            defer { SyncFaults.clear(under: directory) }

            let outcomes = Mutex<[UInt64: Result<UInt64, JournalError>]>([:])
            for number in 4...5 {
                let pending = try journal.append([.put("books", key: "b\(number)", value: bookValue(number))])
                pending.whenDurable({ acknowledgement in
                    outcomes.withLock { $0[pending.sequence] = .success(acknowledgement.sequence) }
                }, ifFailed: { error in
                    outcomes.withLock { $0[pending.sequence] = .failure(error) }
                })
            }
            #expect(eventually { outcomes.withLock { $0.count } == 2 })
            for sequence in UInt64(4)...5 {
                guard case .failure(let error)? = outcomes.withLock({ $0[sequence] }) else {
                    Issue.record("record \(sequence) was acknowledged although its sync failed")
                    continue
                }
                #expect(error.code == .syncFailed && error.systemError == EIO && error.path == journalPath(directory))
            }
            // Acknowledged before the failure: still acknowledged. After it: refused, no sync tried.
            #expect(try journal.pendingWrite(sequence: 3)?.waitUntilDurable().sequence == 3)
            #expect(journalError { _ = try journal.pendingWrite(sequence: 5)?.waitUntilDurable() }?.code == .syncFailed)
            SyncFaults.clear(under: directory)
            let later = journalError { _ = try journal.append([.put("books", key: "b6", value: bookValue(6))]) }
            #expect(later?.code == .syncFailed, "a write after a failed sync must be refused, even once syncs would work")
            #expect(journal.statistics.syncs == 3, "the failed sync was counted or retried")
            #expect(try readBytes(journalPath(directory)).count == Int(synced), "the unsynced records were not cut off")
            journal.close()

            let reopened = try reopen(directory)
            #expect(reopened.lastSequence == 3)
            #expect(reopened.state.collections["books"]?.keys.sorted() == ["b1", "b2", "b3"])
            #expect(StorageFailure.first != nil)
        }
    }

    /// The loop's path (`BatchedSignals`, as the broker and the worker pool run it): the batch's
    /// one sync fails, and every callback of the batch gets the failure on the loop's thread.
    @Test func aBatchWhoseSyncFailsGetsTheFailureForEveryWrite() throws {
        try withTemporaryDirectory { directory in
            var state = KeyedJournalState()
            let journal = try Journal.open(directory: directory, options: JournalOptions(durability: .always), state: &state)
            defer { journal.close() }
            let header = journal.size
            SyncFaults.fail(under: directory, errno: EIO)
            defer { SyncFaults.clear(under: directory) }
            let acknowledged = Atomic(0)
            let failed = Atomic(0)
            BatchedSignals.run {
                for number in 1...10 {
                    do {
                        try journal.append([.put("books", key: "b\(number)", value: bookValue(number))]).whenDurable({ _ in
                            acknowledged.add(1, ordering: .relaxed)
                        }, ifFailed: { _ in
                            failed.add(1, ordering: .relaxed)
                        })
                    } catch {
                        Issue.record("append \(number): \(error)")
                    }
                }
            }
            #expect(eventually { failed.load(ordering: .relaxed) == 10 })
            #expect(acknowledged.load(ordering: .relaxed) == 0)
            #expect(try readBytes(journalPath(directory)).count == Int(header), "the batch's unsynced records were not cut off")
        }
    }
}
