#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A journal file holding one captured state and nothing else: a header whose `base` is the
/// sequence the state reflects, then the state as snapshot parts, exactly what a compaction
/// writes before it carries records over. Opened as a journal, it replays to that state and
/// continues at the next sequence: what a backup holds of each journal.
public struct SnapshotFile: Sendable, Equatable {
    /// The sequence number the snapshot reflects: every record through it, none after.
    public let sequence: UInt64
    /// The live changes it holds (every entity, request ledger entries included).
    public let changes: Int
    /// The file's name, length and CRC-32C of all of its bytes.
    public let summary: JournalFileSummary

    /// Writes `state`, which reflects exactly the records through `sequence`, to a new file at
    /// `path` with mode 0600, synced before this returns. The file must not exist: a link or any
    /// other entry at `path` is refused rather than followed or replaced. Only one snapshot part
    /// (about 1 MiB) is held in memory at a time.
    /// - Throws: `JournalError` `io` when the file cannot be created or written (a partial file is
    ///   removed), `compaction_rejected` when the state hands back a malformed value.
    public static func write(_ state: any JournalState, sequence: UInt64, to path: String) throws -> SnapshotFile {
        let fd = try SystemCall.open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, mode: 0o600)
        var complete = false
        defer {
            close(fd)
            if !complete { try? SystemCall.removeIfPresent(path) }
        }
        let output = BufferedFileWriter(fd: fd, path: path)
        let (_, changes) = try Journal.writeSnapshot(of: state, sequence: sequence, to: output, progress: nil)
        try output.flush()
        try SystemCall.sync(fd, path: path)
        let summary = try checksum(fd: fd, path: path)
        complete = true
        return SnapshotFile(sequence: sequence, changes: changes, summary: summary)
    }

    /// The length and CRC-32C of the regular file at `path`, read through in chunks of
    /// `JournalChunk.maxBytes`; a link at `path` is refused, not followed.
    /// - Throws: `JournalError` `io` when it cannot be opened or read.
    public static func summary(of path: String) throws -> JournalFileSummary {
        let fd = try SystemCall.open(path, O_RDONLY | O_NOFOLLOW)
        defer { close(fd) }
        return try checksum(fd: fd, path: path)
    }

    private static func checksum(fd: Int32, path: String) throws -> JournalFileSummary {
        var buffer = [UInt8](repeating: 0, count: JournalChunk.maxBytes)
        var offset: UInt64 = 0
        var crc: UInt32 = 0
        while true {
            let count = try buffer.withUnsafeMutableBytes {
                try SystemCall.read(fd, into: $0.baseAddress!, count: $0.count, at: offset, path: path)
            }
            guard count > 0 else { break }
            crc = CRC32C.checksum(buffer[0..<count], continuing: crc)
            offset += UInt64(count)
        }
        let name = path.split(separator: "/").last.map(String.init) ?? path
        return JournalFileSummary(file: name, bytes: offset, crc32c: crc)
    }
}
