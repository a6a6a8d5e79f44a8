import Foundation
import LyceumTestSupport
import Replication
import Testing

@Suite struct EpochHistoryTests {
    @Test func factsSurviveAReopenAndAnswerWhichEpochWroteWhat() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/epochs.jsonl"
        do {
            let history = try EpochHistory(path: path)
            try history.record(EpochHistory.Start(epoch: 3, startSequence: 1))
            try history.record(EpochHistory.Start(epoch: 7, startSequence: 41))
            try history.adopt(9)
            #expect(throws: ReplicationError.self) { try history.record(EpochHistory.Start(epoch: 5, startSequence: 60)) }
        }
        let history = try EpochHistory(path: path)
        #expect(history.adopted == 9)
        #expect(history.starts.map(\.epoch) == [3, 7])
        #expect(history.epoch(of: 0) == 0)
        #expect(history.epoch(of: 40) == 3)
        #expect(history.epoch(of: 41) == 7)
        #expect(history.end(of: 3, lastSequence: 90) == 40)
        #expect(history.end(of: 7, lastSequence: 90) == 90)
        try history.forget(after: 30)
        #expect(history.starts.map(\.epoch) == [3])
        try history.record(EpochHistory.Start(epoch: 10, startSequence: 31))
        let reread = try EpochHistory(path: path)
        #expect(reread.starts.map(\.epoch) == [3, 10])
        #expect(reread.adopted == 10)
    }

    @Test func aDamagedLineIsRefusedNamingIt() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/epochs.jsonl"
        try EpochHistory(path: path).record(EpochHistory.Start(epoch: 3, startSequence: 1))
        var bytes = try Array(Data(contentsOf: URL(fileURLWithPath: path)))
        bytes[10] = UInt8(ascii: "9")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: ReplicationError.self) { try EpochHistory(path: path) }
        #expect(error?.code == .history)
        #expect(error?.message.contains("line 1") == true)
    }
    @Test func anUnfinishedLastLineIsCutOffAndLaterFactsFollowAWholeLine() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/epochs.jsonl"
        try EpochHistory(path: path).record(EpochHistory.Start(epoch: 3, startSequence: 1))
        let whole = try Array(Data(contentsOf: URL(fileURLWithPath: path)))
        // A crash in the middle of writing the next fact leaves part of a line, no newline.
        try Data(whole + Array(#"{"adopted":9,"cr"#.utf8)).write(to: URL(fileURLWithPath: path))
        let history = try EpochHistory(path: path)
        #expect(history.adopted == 3)
        #expect(try Array(Data(contentsOf: URL(fileURLWithPath: path))) == whole)
        try history.adopt(5)
        let reread = try EpochHistory(path: path)
        #expect(reread.adopted == 5)
        #expect(reread.starts.map(\.epoch) == [3])
    }
}
