#if canImport(Glibc)
import Glibc
#endif
import Backup
import LyceumTestSupport
import Testing

/// Backups' files and directories are private (0600, 0700), created new, never through a link.
struct PrivateFilesTests {
    static func mode(_ path: String) -> mode_t {
        var status = stat()
        lstat(path, &status)
        return status.st_mode & 0o777
    }

    @Test func directoriesAreMade0700AndAnExistingOneIsRefusedUnlessParentsAreAsked() throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let nested = root.path + "/a/b/c"
        try PrivateFiles.makeDirectory(nested, parents: true)
        #expect(Self.mode(nested) == 0o700 && Self.mode(root.path + "/a") == 0o700)
        #expect(throws: BackupError.self) { try PrivateFiles.makeDirectory(nested) }
        try PrivateFiles.makeDirectory(nested, parents: true)
        #expect(try PrivateFiles.isEmptyDirectory(nested))
    }

    @Test func aNewFileIsWrittenWhole0600AndNeverOverAnExistingOne() throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let path = root.path + "/manifest.json"
        try PrivateFiles.writeNew(path, Array("{}\n".utf8))
        #expect(Self.mode(path) == 0o600)
        #expect(try PrivateFiles.contents(of: path, limit: 3) == Array("{}\n".utf8))
        #expect(throws: BackupError.self) { try PrivateFiles.create(path) }
        #expect(throws: BackupError.self) { try PrivateFiles.contents(of: path, limit: 2) }
    }

    @Test func aLinkIsNeitherFollowedNorWrittenThrough() throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let target = root.path + "/target"
        try PrivateFiles.writeNew(target, Array("secret".utf8))
        let link = root.path + "/link"
        #expect(symlink(target, link) == 0)
        #expect(throws: BackupError.self) { try PrivateFiles.create(link) }
        #expect(throws: BackupError.self) { try PrivateFiles.contents(of: link, limit: 100) }
        #expect(!PrivateFiles.isDirectory(link) && PrivateFiles.exists(link))
        #expect(try PrivateFiles.contents(of: target, limit: 100) == Array("secret".utf8))
    }
}
