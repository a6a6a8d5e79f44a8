import Journal
import Replication
import Testing

/// The channel's format versions (protocol/replication.md, *Format versions*): version 1 says no
/// version, as release-2026-12-07's messages, so that build reads what this one sends it; a later
/// version says `"v"` first; a version this build does not read is refused before anything else
/// of the message is read.
@Suite struct FormatVersionTests {
    static let messages: [ReplicationMessage] = [
        .follow(partition: "books.p7", epoch: 9, position: LogPosition(epoch: 4, sequence: 120), node: "w2"),
        .ack(partition: "books.p7", epoch: 9, durable: 2),
        .refuse(partition: "books.p7", epoch: 11, reason: .unsupportedVersion, position: LogPosition(epoch: 11, sequence: 3)),
    ]

    @Test func versionOneSaysNoVersionAndLaterOnesSayItFirst() throws {
        for message in Self.messages {
            let oldest = String(decoding: message.frames()[0], as: UTF8.self)
            #expect(!oldest.contains(#""v":"#), "\(oldest)")
            #expect(try ReplicationMessage(frames: message.frames()) == message)
            let newest = message.frames(version: ReplicationFormat.newest)
            #expect(String(decoding: newest[0], as: UTF8.self).hasPrefix(#"{"v":\#(ReplicationFormat.newest),"op":"#))
            #expect(try ReplicationMessage(frames: newest) == message)
        }
    }

    @Test func aNewerVersionIsRefusedBeforeAnythingElseIsRead() {
        // An op, a member and a record this build has never seen: none of them is what is reported.
        let frames = [Array(#"{"v":3,"op":"elect","partition":"books.p7","epoch":1,"ballot":{"round":4}}"#.utf8), [1, 2, 3]]
        let error = #expect(throws: ReplicationError.self) { try ReplicationMessage(frames: frames) }
        #expect(error?.code == .unsupportedVersion)
        #expect(error?.message == "a peer speaks replication format v3; this build reads v1 to v\(ReplicationFormat.newest)")
        let zero = #expect(throws: ReplicationError.self) {
            try ReplicationMessage(frames: [Array(#"{"v":0,"op":"ack","partition":"p","epoch":1,"durable_seq":1}"#.utf8)])
        }
        #expect(zero?.code == .badMessage)
    }

    @Test func aPeerIsSpokenTheNewestBothReadAndTheOldestWhenUnknown() {
        #expect(ReplicationFormat.spoken(toPeerReadingUpTo: nil) == ReplicationFormat.oldest)
        #expect(ReplicationFormat.spoken(toPeerReadingUpTo: 1) == 1)
        #expect(ReplicationFormat.spoken(toPeerReadingUpTo: 0) == ReplicationFormat.oldest)
        #expect(ReplicationFormat.spoken(toPeerReadingUpTo: ReplicationFormat.newest + 5) == ReplicationFormat.newest)
    }
}
