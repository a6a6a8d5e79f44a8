#if canImport(Glibc)
import Glibc
#endif

/// The one place where Lyceum makes files durable: every `fsync` and `fdatasync` of the project
/// is made here, under one policy.
///
/// **A failed sync is final.** After `fsync`/`fdatasync` fails, Linux may already have marked
/// the dirty pages clean and cleared the error (PostgreSQL's "fsyncgate"), so a second sync can
/// report success for data that never reached the disk. No function here retries one (only
/// `EINTR`, which means the call never ran), and none returns normally after one: each throws a
/// ``DurableFileError`` whose ``DurableFileError/isSyncFailure`` is set. What a caller does then:
///
/// - a file written once and renamed into place (a certificate, a manifest, a backup file, a
///   history rewrite) is abandoned: the operation fails with the error, the caller's retry
///   writes a new file, never syncs the old pages again;
/// - a file that acknowledgements are built on (a journal, an epoch history) cannot be abandoned
///   by the process that wrote it: its owner refuses every later write, answers the writers
///   waiting with an error, cuts back what was not synced, and calls ``StorageFailure/stop(_:)``
///   so that the process exits with ``StorageFailure/exitStatus`` and the next start recovers
///   from what the disk holds (protocol/journal.md, *A failed sync*).
public enum DurableFile {
    /// Makes `descriptor`'s data durable (`fdatasync`: the bytes, and the size when it grew).
    public static func syncData(_ descriptor: Int32, path: String) throws(DurableFileError) {
        try sync(descriptor, path: path, metadata: false)
    }

    /// Makes `descriptor`'s data and metadata durable (`fsync`): after a truncation, for a new
    /// file's first contents, or for a directory's entries.
    public static func sync(_ descriptor: Int32, path: String) throws(DurableFileError) {
        try sync(descriptor, path: path, metadata: true)
    }

    /// Makes the directory `path`'s entries (a file created, renamed or removed) durable.
    public static func syncDirectory(_ path: String) throws(DurableFileError) {
        let descriptor = try open(path, O_RDONLY | O_DIRECTORY)
        defer { close(descriptor) }
        try sync(descriptor, path: path, metadata: true)
    }

    /// Syncs the directory that holds `path`.
    public static func syncParent(of path: String) throws(DurableFileError) {
        try syncDirectory(parentDirectory(of: path))
    }

    /// The directory `path` is in (`.` for a bare name, `/` for a child of the root).
    public static func parentDirectory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// Opens `path` with `flags` (close-on-exec added), retrying only `EINTR`.
    public static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o644) throws(DurableFileError) -> Int32 {
        while true {
            let descriptor = Glibc.open(path, flags | O_CLOEXEC, mode)
            if descriptor >= 0 { return descriptor }
            if errno != EINTR { throw DurableFileError("open", path: path, systemError: errno) }
        }
    }

    /// Writes all of `bytes` at `offset` of `descriptor`, retrying short writes.
    public static func write(
        _ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, at offset: UInt64, path: String
    ) throws(DurableFileError) {
        var done = 0
        while done < bytes.count {
            let result = pwrite(descriptor, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            if result < 0, errno == EINTR { continue }
            guard result > 0 else { throw DurableFileError("write", path: path, systemError: result < 0 ? errno : EIO) }
            done += result
        }
    }

    /// Writes all of `bytes` at `offset` of `descriptor`, retrying short writes.
    public static func write(_ descriptor: Int32, _ bytes: [UInt8], at offset: UInt64, path: String) throws(DurableFileError) {
        let failure: DurableFileError? = bytes.withUnsafeBytes { buffer in
            do throws(DurableFileError) { try write(descriptor, buffer, at: offset, path: path) } catch { return error }
            return nil
        }
        if let failure { throw failure }
    }

    /// Creates the file `path` with `mode` (never an existing entry, never through a symbolic
    /// link: `open` fails with `EEXIST`), writes `bytes` and syncs it. A file it could not
    /// finish is removed. The caller syncs the directory when the entry itself must last.
    public static func create(_ path: String, bytes: [UInt8], mode: mode_t) throws(DurableFileError) {
        let descriptor = try open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode: mode)
        do throws(DurableFileError) {
            try write(descriptor, bytes, at: 0, path: path)
            try sync(descriptor, path: path)
        } catch {
            close(descriptor)
            unlink(path)
            throw error
        }
        guard close(descriptor) == 0 else {
            let error = DurableFileError("close", path: path, systemError: errno)
            unlink(path)
            throw error
        }
    }

    /// Puts `bytes` at `path` atomically and durably: written to `path` + `suffix` (a leftover
    /// of a crash there is replaced, or refused with `EEXIST` when `freshTemporary`), synced,
    /// renamed over `path`, the directory synced. A crash leaves the old file or the new one; a
    /// failure leaves the old one and no temporary file of this call.
    public static func replace(
        _ path: String, with bytes: [UInt8], mode: mode_t = 0o644, suffix: String = ".tmp", freshTemporary: Bool = false
    ) throws(DurableFileError) {
        let temporary = path + suffix
        let descriptor = try open(temporary, O_WRONLY | O_CREAT | O_NOFOLLOW | (freshTemporary ? O_EXCL : O_TRUNC), mode: mode)
        do throws(DurableFileError) {
            defer { close(descriptor) }
            try write(descriptor, bytes, at: 0, path: temporary)
            try sync(descriptor, path: temporary)
        } catch {
            unlink(temporary)
            throw error
        }
        try rename(temporary, to: path)
    }

    /// Renames `from` to `to` and syncs the directories of both (once when they share one), so
    /// that the rename survives a crash once this returns.
    public static func rename(_ from: String, to: String) throws(DurableFileError) {
        guard Glibc.rename(from, to) == 0 else { throw DurableFileError("rename", path: from, systemError: errno) }
        let parents = [parentDirectory(of: from), parentDirectory(of: to)]
        for (index, parent) in parents.enumerated() where !parents[..<index].contains(parent) {
            try syncDirectory(parent)
        }
    }

    private static func sync(_ descriptor: Int32, path: String, metadata: Bool) throws(DurableFileError) {
        let operation = metadata ? "fsync" : "fdatasync"
        if let injected = SyncFaults.injected(for: path) {
            throw DurableFileError(operation, path: path, systemError: injected)
        }
        // EINTR alone is retried: the call was interrupted before it ran, no page was judged.
        // Any other failure is final (see the type's comment): never a second sync of these pages.
        while (metadata ? fsync(descriptor) : fdatasync(descriptor)) != 0 {
            let code = errno
            if code != EINTR { throw DurableFileError(operation, path: path, systemError: code) }
        }
    }
}
