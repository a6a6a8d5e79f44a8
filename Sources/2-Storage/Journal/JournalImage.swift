#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A live journal's file as it stood at one moment: its header and snapshot, then every record
/// through `lastSequence`, exactly the bytes a replica behind the snapshot is rebuilt from
/// (protocol/replication.md, *Rebuilding a replica*). The file stays readable while the journal
/// goes on: appends only go after `size`, and a compaction renames a new file over the name
/// while this one keeps the old file open.
public final class JournalImage: Sendable {
    private let file: JournalFile
    /// The image's length in bytes: the end of record `lastSequence`.
    public let size: UInt64
    /// The last record the image holds.
    public let lastSequence: UInt64
    /// The sequence number its snapshot reflects.
    public let snapshotSequence: UInt64

    /// The image of `journal` now (taken under the writer's lock, so it ends on a record).
    public init(of journal: Journal) {
        (file, size, lastSequence, snapshotSequence) = journal.writer.withLock { ($0.file, $0.endOffset, $0.lastSequence, $0.base) }
    }

    /// The bytes at `offset`, at most `maxBytes` (fewer only at the image's end).
    /// - Throws: `io` when the file cannot be read or ends before `size` (a replica cut it).
    public func read(at offset: UInt64, maxBytes: Int) throws -> [UInt8] {
        guard offset < size else { return [] }
        let count = Int(min(UInt64(maxBytes), size - offset))
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let got = try bytes.withUnsafeMutableBytes {
                try SystemCall.read(file.fd, into: $0.baseAddress! + done, count: count - done, at: offset + UInt64(done), path: file.path)
            }
            guard got > 0 else { throw JournalError(.io, "the journal ended before the image's \(size) bytes", path: file.path, offset: offset + UInt64(done)) }
            done += got
        }
        return bytes
    }
}

/// A journal file arriving as an image (``JournalImage``) from another replica, written into a
/// staging directory beside the journal it will replace, checked, then installed by one rename:
/// a crash leaves the old journal or the new one, never a mix.
public final class StagedJournal {
    /// The staging directory; it holds `journal.jsonl` while the image arrives.
    public let directory: String
    /// The bytes written so far.
    public private(set) var written: UInt64 = 0
    /// The CRC-32C of the bytes written so far.
    public private(set) var crc32c: UInt32 = 0
    private let fd: Int32
    private let path: String

    /// Starts a fresh staging directory (whatever an earlier attempt left there is removed).
    /// - Throws: `io` when the directory or the file cannot be made.
    public init(directory: String) throws {
        self.directory = directory
        try SystemCall.removeDirectoryDurably(directory)
        try SystemCall.makeDirectory(directory)
        path = JournalPaths(directory: directory).journal
        fd = try SystemCall.open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, mode: 0o600)
    }

    deinit { close(fd) }

    /// Appends `bytes` at the end of what was written.
    /// - Throws: `write_failed` when the disk refuses.
    public func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try SystemCall.write(fd, $0, at: written, path: path) }
        written += UInt64(bytes.count)
        crc32c = CRC32C.checksum(bytes, continuing: crc32c)
    }

    /// Makes the staged file and directory durable.
    /// - Throws: `sync_failed` when a sync fails: discard the staging and start over.
    public func sync() throws {
        try SystemCall.sync(fd, path: path)
        try SystemCall.syncDirectory(directory)
    }

    /// Removes the staging directory.
    public func discard() throws {
        try SystemCall.removeDirectoryDurably(directory)
    }
}

extension Journal {
    /// Replaces the journal file of `directory` (closed: no process may hold it) with the staged
    /// one in `staging` (``StagedJournal``, synced), by one rename made durable in both
    /// directories before this returns. This is the install's commit point.
    /// - Throws: `locked` when the journal is open, `io` when the rename fails (nothing changed).
    public static func install(staged staging: String, into directory: String) throws {
        let paths = JournalPaths(directory: directory)
        let lock = try DirectoryLock(path: paths.lock)
        defer { withExtendedLifetime(lock) {} }
        try SystemCall.rename(JournalPaths(directory: staging).journal, to: paths.journal)
        try SystemCall.syncDirectoryOrStop(directory, outcome: "the rebuilt journal is renamed into place but may not last")
        try SystemCall.syncDirectoryOrStop(staging, outcome: "the rebuilt journal is renamed into place but may not last")
    }
}
