@testable import DurableFiles
import Foundation
import Journal
import LyceumTestSupport
import Replication
import Testing

/// A follower whose disk fails a sync (EIO injected under its directory by `SyncFaults`): it
/// acknowledges nothing the failed sync was to cover, nor anything later, so its leader never
/// counts it for those records; its epoch history cuts off the fact it could not sync and takes
/// no other (protocol/replication.md, *What each side does on every failure*).
@Suite struct FollowerSyncFailureTests {
    @Test func aFollowerWhoseJournalSyncFailsNeverAcknowledgesWhatItDidNotSync() throws {
        try FollowerBatchTests.withFollower { replica, store in
            let records = try FollowerBatchTests.records(9)
            #expect(replica.handle([FollowerBatchTests.append(records[0..<3])]) == [.ack(partition: FollowerBatchTests.partition, epoch: 5, durable: 3)])
            SyncFaults.fail(under: store.directory, errno: EIO)
            defer { SyncFaults.clear(under: store.directory) }
            let failed = replica.handle([FollowerBatchTests.append(records[3..<6])])
            SyncFaults.clear(under: store.directory)
            let later = replica.handle([FollowerBatchTests.append(records[6..<9])])
            for answer in failed + later {
                if case .ack(_, _, let durable) = answer { #expect(durable <= 3, "acknowledged past the failed sync: \(answer)") }
            }
            print("after the failed sync the follower answered \(failed), then \(later)")
        }
    }

    @Test func anEpochHistoryWhoseSyncFailsKeepsNoUnsyncedFactAndTakesNoOther() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/epochs.jsonl"
        let history = try EpochHistory(path: path)
        try history.adopt(3)
        let synced = try Data(contentsOf: URL(fileURLWithPath: path))
        SyncFaults.fail(under: directory.path, errno: EIO)
        #expect(throws: ReplicationError.self) { try history.adopt(9) }
        SyncFaults.clear(under: directory.path)
        #expect(throws: ReplicationError.self, "a fact after a failed sync must be refused") { try history.adopt(10) }
        #expect(history.adopted == 3)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == synced, "the unsynced line was not cut off")
        #expect(try EpochHistory(path: path).adopted == 3)
    }
}
