#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// The few file operations partition set-up needs, each turning a failure into a
/// `PartitionLayoutError` naming the path and the system's reason.
public enum DurableFile {
    /// The bytes of the regular file at `path`, refused unread when larger than `limit`.
    public static func contents(of path: String, limit: Int) throws(PartitionLayoutError) -> [UInt8] {
        var status = stat()
        guard stat(path, &status) == 0 else { throw failure("cannot stat", path) }
        guard status.st_mode & S_IFMT == S_IFREG else { throw PartitionLayoutError(path: path, "is not a regular file") }
        guard status.st_size <= limit, let handle = FileHandle(forReadingAtPath: path) else {
            throw PartitionLayoutError(path: path, status.st_size > limit ? "is larger than \(limit) bytes" : "cannot be opened")
        }
        defer { try? handle.close() }
        // The size can change after stat: read at most one byte past the limit to notice.
        guard let data = try? handle.read(upToCount: limit + 1) ?? Data() else { throw PartitionLayoutError(path: path, "cannot be read") }
        guard data.count <= limit else { throw PartitionLayoutError(path: path, "is larger than \(limit) bytes") }
        return Array(data)
    }

    /// Puts `bytes` at `path` durably: written to `path.tmp`, synced, renamed over `path`, and
    /// the directory synced.
    public static func replace(_ path: String, with bytes: [UInt8]) throws(PartitionLayoutError) {
        let temporary = path + ".tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw failure("cannot create", temporary) }
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + written, $0.count - written) }
            if result < 0, errno == EINTR { continue }
            guard result >= 0 else {
                let error = failure("cannot write", temporary)
                close(descriptor)
                throw error
            }
            written += result
        }
        guard fsync(descriptor) == 0 else {
            let error = failure("cannot sync", temporary)
            close(descriptor)
            throw error
        }
        close(descriptor)
        guard rename(temporary, path) == 0 else { throw failure("cannot rename into place", temporary) }
        try syncDirectory(parentDirectory(of: path))
    }

    /// Creates the directory `path` (its parent must exist) and syncs the parent, so that the
    /// new entry survives a crash.
    /// - Throws: also when `path` already exists.
    public static func makeDirectory(_ path: String) throws(PartitionLayoutError) {
        guard mkdir(path, 0o755) == 0 else { throw failure("cannot create directory", path) }
        try syncDirectory(parentDirectory(of: path))
    }

    /// Creates `path` and every missing ancestor, like `mkdir -p`.
    public static func makeDirectories(_ path: String) throws(PartitionLayoutError) {
        guard !exists(path) else { return }
        let parent = parentDirectory(of: path)
        if parent != path, !parent.isEmpty { try makeDirectories(parent) }
        try makeDirectory(path)
    }

    /// Whether anything (a file, a directory, a dangling link) is at `path`.
    public static func exists(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0
    }

    /// Makes the directory `path`'s entries (a rename, a new file) durable.
    public static func syncDirectory(_ path: String) throws(PartitionLayoutError) {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure("cannot open directory", path) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw failure("cannot sync directory", path) }
    }

    /// The directory `path` is in (`.` for a bare name, `/` for a child of the root).
    public static func parentDirectory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    private static func failure(_ what: String, _ path: String) -> PartitionLayoutError {
        PartitionLayoutError(path: path, "\(what): \(String(cString: strerror(errno)))")
    }
}
