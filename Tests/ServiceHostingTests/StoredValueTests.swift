import Configuration
import Foundation
import Journal
import LearningServices
import LyceumServer
import LyceumTestSupport
@testable import ServiceHosting
import Testing

/// Stored values: a record whose value does not decode, or comes from a newer Lyceum, is never
/// skipped (start refused, `journal check` reports it, compaction refuses), and the journals the
/// release before value formats wrote (`Fixtures/release-1-data`, written by `lyceum serve` of
/// that release) still load.
struct StoredValueTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/release-1-data").path
    static let dune = "3c73a605-02ec-422f-9dc4-caf8d96b0359"
    static let emma = "55428b13-1f3c-4f7c-a75d-ac350dc26d18"
    /// A book of the genre Cookery, which no build knows, written in today's format.
    static let cookery = #"{"put":"books","key":"ada/0b3e4a8c-5d2f-4e61-9a7b-c8d9e0f1a2b3","value":{"value_format":1,"id":"0b3e4a8c-5d2f-4e61-9a7b-c8d9e0f1a2b3","learner":"ada","title":"Larousse","author":"Prosper Montagné","genre":"Cookery","rating":5,"review":"","version":1,"created_at":1796144440000,"updated_at":1796144440000}}"#

    /// A copy of the fixture's data directory.
    static func copyOfTheFixture() throws -> TemporaryDirectory {
        let data = try TemporaryDirectory()
        for service in ["books", "progress"] {
            try FileManager.default.createDirectory(atPath: data.path + "/" + service, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: "\(fixture)/\(service)/journal.jsonl", toPath: "\(data.path)/\(service)/journal.jsonl")
        }
        return data
    }

    /// Appends a checksummed record holding `change` (one change's JSON) to the journal of
    /// `service`; returns the record's offset and sequence number.
    static func append(_ change: String, to service: String, in data: TemporaryDirectory) throws -> (offset: Int, sequence: Int) {
        let path = "\(data.path)/\(service)/journal.jsonl"
        let journal = try String(contentsOfFile: path, encoding: .utf8)
        let last = try #require(journal.split(separator: "\n").last)
        let sequence = try #require(Int(last.dropFirst(#"{"seq":"#.count).prefix { $0.isNumber })) + 1
        let body = #"{"seq":\#(sequence),"changes":[\#(change)]"#
        let crc = String(CRC32C.checksum(Array(body.utf8)), radix: 16)
        let line = body + #","crc":""# + String(repeating: "0", count: 8 - crc.count) + crc + "\"}\n"
        let handle = try #require(FileHandle(forWritingAtPath: path))
        defer { try? handle.close() }
        let offset = try handle.seekToEnd()
        try handle.write(contentsOf: Data(line.utf8))
        return (Int(offset), sequence)
    }

    @Test func theJournalsOfTheReleaseBeforeValueFormatsStillLoad() throws {
        let data = try Self.copyOfTheFixture()
        defer { data.remove() }
        var settings = Settings()
        settings.dataDirectory = data.path
        let host = try ServiceHost(serving: ["books", "progress"], settings: settings.hosting)
        let dune = try parse(host.books.handle(Array(#"{"op":"get","learner":"ada","id":"\#(Self.dune)"}"#.utf8)))
        let book = try #require(dune.result["book"] as? [String: Any])
        #expect(book["rating"] as? Int == 4 && book["version"] as? Int == 2)
        #expect(try parse(host.books.handle(Array(#"{"op":"get","learner":"ada","id":"\#(Self.emma)"}"#.utf8))).isOK == false)
        let bob = try parse(host.books.handle(Array(#"{"op":"list","learner":"bob"}"#.utf8)))
        #expect((bob.result["books"] as? [[String: Any]])?.first?["title"] as? String == #"Ἰλιάς "Α""#)
        // The ledger entry of that release still answers the retried update with its reply.
        let retried = try parse(host.books.handle(Array(#"{"op":"update","learner":"ada","id":"\#(Self.dune)","rating":4,"request_id":"dune-2"}"#.utf8)))
        #expect((retried.result["book"] as? [String: Any])?["version"] as? Int == 2)
        let progress = try parse(try #require(host.service(named: "progress")).handle(Array(#"{"op":"get","learner":"ada","course":"swiftui-essentials"}"#.utf8)))
        #expect((progress.result["progress"] as? [String: Any])?["watched_count"] as? Int == 2)
        host.close()

        let check = try LyceumProcess.run(["journal", "check", "--data", data.path])
        #expect(check.status == 0, "\(check.stdout)")
        #expect(check.stdout.contains("decoded as books") && check.stdout.contains("decoded as progress"))
    }

    @Test func anUndecodableRecordStopsTheStartAndEveryToolNamesIt() throws {
        let data = try Self.copyOfTheFixture()
        defer { data.remove() }
        let journal = data.path + "/books/journal.jsonl"
        let (offset, sequence) = try Self.append(Self.cookery, to: "books", in: data)
        let before = try Data(contentsOf: URL(fileURLWithPath: journal))

        let serve = try LyceumProcess.run(["serve", "--data", data.path, "--endpoint", try freeLoopbackEndpoint()])
        #expect(serve.status == 1)
        for fact in ["undecodable_value", journal, "offset \(offset)", "seq \(sequence)", "Cookery"] {
            #expect(serve.stderr.contains(fact), "serve's log names \(fact): \(serve.stderr)")
        }

        let check = try LyceumProcess.run(["journal", "check", "--data", data.path])
        #expect(check.status == 1)
        #expect(check.stdout.contains("undecodable_value at offset \(offset), sequence \(sequence)"), "\(check.stdout)")
        #expect(check.stdout.contains("Cookery"))

        let repair = try LyceumProcess.run(["journal", "repair", "--data", data.path])
        #expect(repair.status == 1)
        #expect(repair.stdout.contains("not repaired: undecodable_value at offset \(offset)"), "\(repair.stdout)")

        let compact = try LyceumProcess.run(["journal", "compact", "--data", data.path])
        #expect(compact.status == 1)
        #expect(compact.stderr.contains("refusing to compact"), "\(compact.stderr)")

        // In process too: the host never gets a state that misses the record, so no online
        // compaction can write a snapshot without it.
        var settings = Settings()
        settings.dataDirectory = data.path
        let error = #expect(throws: JournalError.self) { try ServiceHost(serving: ["books"], settings: settings.hosting) }
        #expect(error?.code == .undecodableValue && error?.offset == UInt64(offset) && error?.sequence == UInt64(sequence))
        #expect(try Data(contentsOf: URL(fileURLWithPath: journal)) == before, "nothing changed the journal")
    }

    @Test func aValueFromANewerLyceumIsRefusedSayingSo() throws {
        let data = try Self.copyOfTheFixture()
        defer { data.remove() }
        let newer = #"{"put":"progress","key":"cy/swiftui-essentials","value":{"value_format":2,"learner":"cy","course":"swiftui-essentials","mood":"keen"}}"#
        let (offset, sequence) = try Self.append(newer, to: "progress", in: data)
        let serve = try LyceumProcess.run(["serve", "--data", data.path, "--endpoint", try freeLoopbackEndpoint()])
        #expect(serve.status == 1)
        #expect(serve.stderr.contains("written by a newer Lyceum: value format v2, this build reads up to v1"), "\(serve.stderr)")
        #expect(serve.stderr.contains("offset \(offset)") && serve.stderr.contains("seq \(sequence)"))
        let check = try LyceumProcess.run(["journal", "check", "--data", data.path + "/progress"])
        #expect(check.status == 1)
        #expect(check.stdout.contains("value format v2, this build reads up to v1"), "\(check.stdout)")
    }
}
