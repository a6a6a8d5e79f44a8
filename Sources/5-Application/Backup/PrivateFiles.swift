import DurableFiles
#if canImport(Glibc)
import Glibc
#endif

/// The file operations of backups and restores: directories created 0700 and files 0600, each
/// created new (never an existing entry reused, never a link followed), written whole and
/// synced. Every failure is a `BackupError` naming the path and the system's reason.
package enum PrivateFiles {
    /// Creates the directory `path` with mode 0700, and its missing parents too when `parents`;
    /// an existing directory (not a link to one) is accepted only when `parents` allows it.
    package static func makeDirectory(_ path: String, parents: Bool = false) throws(BackupError) {
        if parents {
            if isDirectory(path) { return }
            let parent = DurableFile.parentDirectory(of: path)
            if parent != path { try makeDirectory(parent, parents: true) }
        }
        guard mkdir(path, 0o700) == 0 else { throw failure("cannot create the directory", path) }
    }

    /// Whether `path` itself is a directory (a link to one is not).
    package static func isDirectory(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
    }

    /// Whether anything (a file, a directory, a dangling link) is at `path`.
    package static func exists(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0
    }

    /// Whether the directory `path` holds no entry.
    package static func isEmptyDirectory(_ path: String) throws(BackupError) -> Bool {
        guard isDirectory(path) else { throw BackupError(path: path, "is not a directory (a link is not followed)") }
        guard let directory = opendir(path) else { throw failure("cannot list", path) }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { return false }
        }
        return true
    }

    /// Creates the file `path`, mode 0600, which must not exist (a link there is refused).
    package static func create(_ path: String) throws(BackupError) -> Int32 {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw failure("cannot create", path) }
        return descriptor
    }

    /// The bytes of the regular file `path` (a link is refused), refused unread when larger than `limit`.
    package static func contents(of path: String, limit: Int) throws(BackupError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure("cannot open", path) }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress!, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw failure("cannot read", path) }
            if count == 0 { return bytes }
            bytes.append(contentsOf: buffer[0..<count])
            guard bytes.count <= limit else { throw BackupError(path: path, "is larger than \(limit) bytes") }
        }
    }

    /// Writes all of `bytes` at `offset` of `descriptor`.
    package static func write(_ descriptor: Int32, _ bytes: [UInt8], at offset: UInt64, path: String) throws(BackupError) {
        var done = 0
        while done < bytes.count {
            let result = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress! + done, $0.count - done, off_t(offset) + off_t(done)) }
            if result < 0, errno == EINTR { continue }
            guard result > 0 else { throw failure("cannot write", path) }
            done += result
        }
    }

    /// Makes what was written to `descriptor` durable (`DurableFile.sync`). A failed sync
    /// fails the backup or restore: the file is never synced again, its copy starts over.
    package static func sync(_ descriptor: Int32, path: String) throws(BackupError) {
        do { try DurableFile.sync(descriptor, path: path) } catch { throw BackupError(error) }
    }

    /// Writes `bytes` to the new file `path` durably: a new file beside it, synced, renamed into
    /// place, the directory synced; a crash leaves no file at `path` or the whole one.
    package static func writeNew(_ path: String, _ bytes: [UInt8]) throws(BackupError) {
        do {
            try DurableFile.replace(path, with: bytes, mode: 0o600, suffix: ".partial", freshTemporary: true)
        } catch {
            throw BackupError(error)
        }
    }

    /// Renames `from` to `to` and syncs the parent directory of `to`.
    package static func rename(_ from: String, to: String) throws(BackupError) {
        guard Glibc.rename(from, to) == 0 else { throw failure("cannot rename to \(to)", from) }
        do { try DurableFile.syncParent(of: to) } catch { throw BackupError(error) }
    }

    private static func failure(_ what: String, _ path: String) -> BackupError {
        BackupError(path: path, "\(what): \(String(cString: strerror(errno)))")
    }
}

extension BackupError {
    /// The backup error that a failed durable-file operation is: its path, call and reason.
    init(_ error: DurableFileError) {
        self.init(path: error.path, "\(error.operation) failed: \(error.reason)")
    }
}
