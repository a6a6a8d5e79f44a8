import Journal
import Replication
import Testing

@Suite struct MessageTests {
    static func record(_ sequence: UInt64) throws -> ReplicatedRecord {
        try ReplicatedRecord(line: recordLine(sequence))
    }

    @Test func everyMessageSurvivesItsFrames() throws {
        let messages: [ReplicationMessage] = [
            .follow(partition: "books.p7", epoch: 9, position: LogPosition(epoch: 4, sequence: 120)),
            .follow(partition: "books.p7", epoch: 9, position: LogPosition(epoch: 4, sequence: 120), node: "w2"),
            .append(partition: "books.p7", epoch: 9, previous: LogPosition(epoch: 4, sequence: 0), commit: 0,
                    epochs: [EpochHistory.Start(epoch: 9, startSequence: 1)], records: [try Self.record(1), try Self.record(2)]),
            .append(partition: "books.p7", epoch: 9, previous: LogPosition(epoch: 9, sequence: 2), commit: 2, epochs: [], records: []),
            .ack(partition: "books.p7", epoch: 9, durable: 2),
            .refuse(partition: "books.p7", epoch: 11, reason: .staleEpoch, position: LogPosition(epoch: 11, sequence: 3)),
            .truncate(partition: "books.p7", epoch: 9, after: 100),
        ]
        for message in messages {
            #expect(try ReplicationMessage(frames: message.frames()) == message)
        }
    }

    @Test func whatIsNotTheProtocolIsRefusedWithItsReason() throws {
        func refusal(_ frames: [[UInt8]], limits: ReplicationMessage.Limits = .init()) -> ReplicationError? {
            #expect(throws: ReplicationError.self) { try ReplicationMessage(frames: frames, limits: limits) }
        }
        let ack = ReplicationMessage.ack(partition: "books.p7", epoch: 1, durable: 1).frames()
        #expect(refusal([])?.code == .badMessage)
        #expect(refusal([Array("[1]".utf8)])?.code == .badMessage)
        #expect(refusal([Array(#"{"op":"vote","partition":"p","epoch":1}"#.utf8)])?.code == .badMessage)
        #expect(refusal([Array(#"{"op":"ack","partition":"p","epoch":1,"durable_seq":1,"extra":0}"#.utf8)])?.code == .badMessage)
        #expect(refusal([Array(#"{"op":"ack","partition":"p","epoch":-1,"durable_seq":1}"#.utf8)])?.code == .badMessage)
        #expect(refusal(ack + [[1]])?.code == .badMessage)
        // A follower's node name is printable, without spaces, at most 64 bytes.
        let follow = #"{"op":"follow","partition":"p","epoch":1,"position":{"epoch":0,"seq":0},"node":"#
        #expect(refusal([Array((follow + #""w 2"}"#).utf8)])?.code == .badMessage)
        #expect(refusal([Array((follow + #""\#(String(repeating: "w", count: 65))"}"#).utf8)])?.code == .badMessage)
        #expect(refusal([Array((follow + "7}").utf8)])?.code == .badMessage)
        var damaged = try recordLine(1)
        damaged[12] ^= 1
        let append = ReplicationMessage.append(partition: "p", epoch: 1, previous: LogPosition(epoch: 0, sequence: 0), commit: 0, epochs: [], records: []).frames()
        #expect(refusal(append + [damaged])?.code == .badRecord)
        var small = ReplicationMessage.Limits()
        small.maxRecords = 1
        #expect(refusal(append + [try recordLine(1), try recordLine(2)], limits: small)?.code == .badMessage)
        #expect(refusal([[UInt8](repeating: 0x20, count: 70_000)])?.code == .badMessage)
    }
}
