#if canImport(Glibc)
import Glibc
#endif

/// A durable-file operation that failed: which system call, on which file, and the system's reason.
public struct DurableFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The system call that failed (`fdatasync`, `fsync`, `write`, `open`, `rename`, …).
    public let operation: String
    /// The file or directory it was called on.
    public let path: String
    /// Its errno.
    public let systemError: Int32

    /// A failure of `operation` on `path` with errno `systemError`.
    public init(_ operation: String, path: String, systemError: Int32) {
        self.operation = operation
        self.path = path
        self.systemError = systemError
    }

    /// Whether a sync failed, after which what the file holds on disk is unknown
    /// (``DurableFile/syncData(_:path:)``).
    public var isSyncFailure: Bool { operation == "fdatasync" || operation == "fsync" }

    /// The system's reason, e.g. `Input/output error`.
    public var reason: String { String(cString: strerror(systemError)) }

    /// `fdatasync of /data/journal.jsonl failed: Input/output error (errno 5)`.
    public var description: String { "\(operation) of \(path) failed: \(reason) (errno \(systemError))" }
}
