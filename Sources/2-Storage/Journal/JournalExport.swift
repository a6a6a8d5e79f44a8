import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A closed journal directory being handed to another holder: its files read as checksummed
/// chunks, then the directory renamed away so this process no longer holds it.
///
/// The export takes the directory's lock, the same one `Journal.open` takes, and keeps it until
/// it is released: while a move runs, nothing (in this process or another) can open the journal
/// and append records the copy would miss. Release without `renameAway` and the directory is
/// exactly as it was, ready to be opened and served again.
public final class JournalExport: Sendable {
    /// The directory being exported; after `renameAway(to:)` it no longer exists under this name.
    public let directory: String
    /// The names of the files that travel, sorted: every regular file but the lock and a
    /// compaction's leftover temporary file.
    public let files: [String]
    private let lock: DirectoryLock

    /// Locks `directory` and lists its files.
    /// - Throws: `JournalError` `locked` while a journal (here or in another process) has it open,
    ///   `io` when it is not a readable directory.
    public init(directory: String) throws {
        guard SystemCall.isDirectory(directory) else {
            throw JournalError(.io, "the journal directory to move does not exist", path: directory)
        }
        lock = try DirectoryLock(path: JournalPaths(directory: directory).lock)
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw JournalError(.io, "cannot list the journal directory: \(error.localizedDescription)", path: directory)
        }
        self.directory = directory
        files = names.filter { TransferredName.isAcceptable($0) && SystemCall.isRegularFile(directory + "/" + $0) }.sorted()
    }

    /// Reads every file in order and hands each piece of at most `chunkBytes` to `send` (an
    /// empty file as one empty chunk); returns each file's length and whole checksum, computed
    /// from the same reads.
    /// - Throws: `JournalError` `io` when a file cannot be read, or whatever `send` throws.
    public func forEachChunk(
        chunkBytes: Int = JournalChunk.maxBytes, _ send: (JournalChunk) throws -> Void
    ) throws -> [JournalFileSummary] {
        precondition(chunkBytes > 0 && chunkBytes <= JournalChunk.maxBytes, "chunkBytes out of range")
        var summaries: [JournalFileSummary] = []
        var buffer = [UInt8](repeating: 0, count: chunkBytes)
        for name in files {
            let path = directory + "/" + name
            let fd = try SystemCall.open(path, O_RDONLY)
            defer { close(fd) }
            var offset: UInt64 = 0
            var crc: UInt32 = 0
            while true {
                let count = try buffer.withUnsafeMutableBytes {
                    try SystemCall.read(fd, into: $0.baseAddress!, count: chunkBytes, at: offset, path: path)
                }
                if count == 0 && offset > 0 { break }
                let chunk = JournalChunk(file: name, offset: offset, bytes: Array(buffer[0..<count]))
                crc = CRC32C.checksum(chunk.bytes, continuing: crc)
                try send(chunk)
                offset += UInt64(count)
                if count == 0 { break }
            }
            summaries.append(JournalFileSummary(file: name, bytes: offset, crc32c: crc))
        }
        return summaries
    }

    /// Each file's length and whole checksum, read through without sending anything: what an
    /// `adopt` names when a move is finished later from the renamed-away copy.
    public func summaries() throws -> [JournalFileSummary] {
        try forEachChunk { _ in }
    }

    /// Renames the directory to `newPath` (on the same file system) and makes the rename durable
    /// by syncing the parent directories before returning: from then on this process's copy is
    /// no longer the partition's journal directory, even after a crash. The lock stays held.
    /// - Throws: `JournalError` `io`, with nothing renamed, when the rename fails.
    public func renameAway(to newPath: String) throws {
        try SystemCall.renameDurably(directory, to: newPath)
    }
}
