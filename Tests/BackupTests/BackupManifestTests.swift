@testable import Backup
import JSON
import Testing

/// A backup's manifest reads back what it wrote, and refuses what would let a backup name a
/// file outside itself or come from a newer Lyceum.
struct BackupManifestTests {
    /// A manifest of two journals, with `journals` replaced when given.
    static func text(version: Int = 1, journals: String? = nil) -> String {
        let formats = BackupLayout.newestValueFormats.sorted { $0.key < $1.key }.map { "\"\($0.key)\": \($0.value)" }.joined(separator: ", ")
        let defaultJournals = """
            [{"service": "books", "partition": 3, "file": "books/p3/journal.jsonl", "sequence": 12, "entries": 4, "bytes": 900, "crc32c": 77},
             {"service": "progress", "file": "progress/journal.jsonl", "sequence": 0, "entries": 0, "bytes": 0, "crc32c": 0}]
            """
        return """
            {"format": "lyceum-backup", "version": \(version), "created": "2026-12-07T22:00:00Z", "source": "tcp://127.0.0.1:5555",
             "lyceum_version": "test", "value_formats": {\(formats)}, "partitions": 8, "journals": \(journals ?? defaultJournals)}
            """
    }

    @Test func aManifestReadsBackWhatItWrote() throws {
        let manifest = try BackupManifest(bytes: Array(Self.text().utf8))
        #expect(manifest.journals.map(\.file) == ["books/p3/journal.jsonl", "progress/journal.jsonl"])
        #expect(manifest.totalBytes == 900 && manifest.partitions == 8)
        #expect(try BackupManifest(bytes: manifest.bytes) == manifest)
    }

    @Test(arguments: [
        #"[{"service": "books", "file": "../../etc/passwd", "sequence": 1, "entries": 1, "bytes": 1, "crc32c": 1}]"#,
        #"[{"service": "catalog", "file": "catalog/journal.jsonl", "sequence": 1, "entries": 1, "bytes": 1, "crc32c": 1}]"#,
        #"[{"service": "books", "partition": 2, "file": "books/p3/journal.jsonl", "sequence": 1, "entries": 1, "bytes": 1, "crc32c": 1}]"#,
    ])
    func aJournalFileOtherThanItsServicesIsRefused(journals: String) {
        #expect {
            try BackupManifest(bytes: Array(Self.text(journals: journals).utf8))
        } throws: { error in
            (error as? JSONReadError)?.path == "$.journals[0].file"
        }
    }

    @Test func aManifestFromANewerLyceumIsRefusedNamingTheVersion() {
        #expect {
            try BackupManifest(bytes: Array(Self.text(version: 2).utf8))
        } throws: { error in
            "\(error)".contains("written by a newer Lyceum")
        }
    }

    @Test(arguments: ["", "{", "[]", #"{"format": "tar"}"#])
    func whatIsNoManifestIsRefused(text: String) {
        #expect(throws: JSONReadError.self) { try BackupManifest(bytes: Array(text.utf8)) }
    }
}
