import Foundation
import LyceumTestSupport
import Replication
import Testing

/// The directory syncs the power-loss filesystem found missing (issue 36), each checked on its own:
/// a file whose data was synced is still lost at a power loss when its directory entry was not.
@Suite(.serialized, .offTheCooperativePool, .enabled(if: PowerLossFilesystem.unavailability == nil, Comment(rawValue: PowerLossFilesystem.unavailability ?? "")))
struct PowerLossDirectorySyncTests {
    /// A new `epochs.jsonl` survives a power loss with the epoch it adopted: the history syncs its
    /// directory when it opens (before, the file's entry, and so the adoption, was lost).
    @Test func aNewEpochHistoryKeepsItsAdoptionAcrossAPowerLoss() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let disk = try PowerLossFilesystem(in: directory.path)
        defer { disk.unmount() }
        do {
            let history = try EpochHistory(path: disk.mountpoint + "/epochs.jsonl")
            try history.adopt(87)
        }
        let summary = try disk.cut()
        print("epoch history power loss: the disk lost \(summary)")
        try disk.mount()
        let reopened = try EpochHistory(path: disk.mountpoint + "/epochs.jsonl")
        #expect(reopened.adopted == 87, "\(summary)")
    }
}
