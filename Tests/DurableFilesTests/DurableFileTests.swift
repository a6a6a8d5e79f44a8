@testable import DurableFiles
import Foundation
import Testing

/// `DurableFile` on real files in a temporary directory: what each operation leaves behind, and
/// that a failed sync (injected: `SyncFaults`) fails the operation, leaves the old file, and is
/// never retried.
@Suite struct DurableFileTests {
    @Test func replacePutsTheNewBytesAndLeavesNoTemporaryFile() throws {
        try withDirectory { directory in
            let path = directory + "/manifest.json"
            try DurableFile.replace(path, with: Array("one\n".utf8))
            try DurableFile.replace(path, with: Array("two\n".utf8))
            #expect(try contents(path) == "two\n")
            #expect(try entries(directory) == ["manifest.json"])
        }
    }

    @Test func createRefusesAnExistingFileAndALink() throws {
        try withDirectory { directory in
            let path = directory + "/key_secret"
            try DurableFile.create(path, bytes: Array("secret".utf8), mode: 0o600)
            var status = stat()
            #expect(stat(path, &status) == 0 && status.st_mode & 0o777 == 0o600)
            #expect(throws: DurableFileError("open", path: path, systemError: EEXIST)) {
                try DurableFile.create(path, bytes: Array("other".utf8), mode: 0o600)
            }
            #expect(try contents(path) == "secret")
            let link = directory + "/link"
            #expect(symlink(directory + "/elsewhere", link) == 0)
            #expect(throws: DurableFileError.self) { try DurableFile.create(link, bytes: [1], mode: 0o600) }
            #expect(!FileManager.default.fileExists(atPath: directory + "/elsewhere"))
        }
    }

    /// A failed sync fails `replace` with a sync error: the old file stays whole, the
    /// temporary one is removed, and the error names the call, the file and the errno.
    @Test func aFailedSyncFailsReplaceAndKeepsTheOldFile() throws {
        try withDirectory { directory in
            let path = directory + "/manifest.json"
            try DurableFile.replace(path, with: Array("old\n".utf8))
            SyncFaults.fail(under: directory, errno: EIO)
            defer { SyncFaults.clear(under: directory) }
            let error = try #require(throws: DurableFileError.self) { try DurableFile.replace(path, with: Array("new\n".utf8)) }
            #expect(error.isSyncFailure)
            #expect(error.operation == "fsync" && error.path == path + ".tmp" && error.systemError == EIO)
            #expect(error.description == "fsync of \(path).tmp failed: Input/output error (errno 5)")
            #expect(try contents(path) == "old\n")
            #expect(try entries(directory) == ["manifest.json"])
        }
    }

    @Test func aFailedSyncFailsCreateAndRemovesTheFile() throws {
        try withDirectory { directory in
            let path = directory + "/cert"
            SyncFaults.fail(under: directory, errno: EIO)
            defer { SyncFaults.clear(under: directory) }
            let error = try #require(throws: DurableFileError.self) { try DurableFile.create(path, bytes: Array("x".utf8), mode: 0o644) }
            #expect(error.isSyncFailure && error.systemError == EIO)
            #expect(try entries(directory).isEmpty)
        }
    }

    /// `syncData` on a descriptor: a fault under another directory does not touch this one, and
    /// once a fault is asked for, every sync fails (none is retried into a success).
    @Test func syncDataFailsOnlyUnderTheFaultyDirectoryAndEveryTime() throws {
        try withDirectory { directory in
            try withDirectory { other in
                let path = directory + "/journal.jsonl"
                let descriptor = open(path, O_RDWR | O_CREAT, 0o644)
                defer { close(descriptor) }
                try DurableFile.write(descriptor, Array("record\n".utf8), at: 0, path: path)
                SyncFaults.fail(under: other, errno: EIO)
                defer { SyncFaults.clear(under: other) }
                try DurableFile.syncData(descriptor, path: path)
                SyncFaults.fail(under: directory, errno: ENOSPC)
                defer { SyncFaults.clear(under: directory) }
                for _ in 0..<2 {
                    let error = try #require(throws: DurableFileError.self) { try DurableFile.syncData(descriptor, path: path) }
                    #expect(error.operation == "fdatasync" && error.systemError == ENOSPC && error.isSyncFailure)
                }
            }
        }
    }

    @Test func renameMovesTheFileAcrossDirectories() throws {
        try withDirectory { directory in
            try FileManager.default.createDirectory(atPath: directory + "/staging", withIntermediateDirectories: false)
            try DurableFile.replace(directory + "/staging/epochs.jsonl", with: Array("e\n".utf8))
            try DurableFile.rename(directory + "/staging/epochs.jsonl", to: directory + "/epochs.jsonl")
            #expect(try contents(directory + "/epochs.jsonl") == "e\n")
            #expect(try entries(directory + "/staging").isEmpty)
            #expect(throws: DurableFileError("rename", path: directory + "/missing", systemError: ENOENT)) {
                try DurableFile.rename(directory + "/missing", to: directory + "/x")
            }
        }
    }

    @Test func parentDirectoryOfEachShapeOfPath() {
        #expect(DurableFile.parentDirectory(of: "/data/books/p3") == "/data/books")
        #expect(DurableFile.parentDirectory(of: "/data") == "/")
        #expect(DurableFile.parentDirectory(of: "data") == ".")
    }

    private func withDirectory(_ body: (String) throws -> Void) throws {
        let path = NSTemporaryDirectory() + "durable-files-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        defer {
            do { try FileManager.default.removeItem(atPath: path) } catch { Issue.record("cannot remove \(path): \(error)") }
        }
        try body(path)
    }

    private func contents(_ path: String) throws -> String {
        String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
    }

    private func entries(_ directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
    }
}
