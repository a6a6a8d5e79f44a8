import DurableFiles
#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// The few file operations partition set-up needs, each turning a failure into a
/// `PartitionLayoutError` naming the path and the system's reason; what must last is made
/// durable by `DurableFiles.DurableFile`, under its policy (a failed sync fails the operation).
public enum LayoutFiles {
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
    /// the directory synced (`DurableFile.replace`).
    public static func replace(_ path: String, with bytes: [UInt8]) throws(PartitionLayoutError) {
        do { try DurableFile.replace(path, with: bytes) } catch { throw PartitionLayoutError(error) }
    }

    /// Creates the directory `path` (its parent must exist) and syncs the parent, so that the
    /// new entry survives a crash.
    /// - Throws: also when `path` already exists.
    public static func makeDirectory(_ path: String) throws(PartitionLayoutError) {
        guard mkdir(path, 0o755) == 0 else { throw failure("cannot create directory", path) }
        do { try DurableFile.syncParent(of: path) } catch { throw PartitionLayoutError(error) }
    }

    /// Creates `path` and every missing ancestor, like `mkdir -p`.
    public static func makeDirectories(_ path: String) throws(PartitionLayoutError) {
        guard !exists(path) else { return }
        let parent = DurableFile.parentDirectory(of: path)
        if parent != path, !parent.isEmpty { try makeDirectories(parent) }
        try makeDirectory(path)
    }

    /// Whether anything (a file, a directory, a dangling link) is at `path`.
    public static func exists(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0
    }

    private static func failure(_ what: String, _ path: String) -> PartitionLayoutError {
        PartitionLayoutError(path: path, "\(what): \(String(cString: strerror(errno)))")
    }
}

extension PartitionLayoutError {
    /// The layout error that a failed durable-file operation is: its path, call and reason.
    init(_ error: DurableFileError) {
        self.init(path: error.path, "\(error.operation) failed: \(error.reason)")
    }
}
