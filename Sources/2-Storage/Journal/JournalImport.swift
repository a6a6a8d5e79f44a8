#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A journal directory arriving from another holder (a partition move), kept apart from the
/// journal directory it will become until it is complete, verified and adopted.
///
/// Three names of the destination `D` mark the stages, so that a crash at any point leaves a
/// state that says what happened: `D.incoming` while chunks arrive (partial, never opened),
/// `D.received` once every file matches the sender's summary and is durable, and `D` itself after
/// `adopt(expecting:)`, when it is a journal directory like any other. Every call checks the disk rather
/// than remembering, so a restarted receiver continues from what it finds.
public struct JournalImport: Sendable {
    /// The journal directory the copy becomes when adopted.
    public let destination: String
    /// Where chunks are written while they arrive.
    public var incoming: String { destination + ".incoming" }
    /// Where the complete, verified copy waits to be adopted.
    public var received: String { destination + ".received" }

    /// An import into `destination`; nothing on disk changes until `begin()`.
    public init(destination: String) {
        self.destination = destination
    }

    /// Starts a fresh copy: removes whatever an earlier, unfinished attempt left and creates an
    /// empty incoming directory.
    /// - Throws: `JournalError` `already_exists` when `destination` exists (this holder has the
    ///   journal), `io` when the directories cannot be made.
    public func begin() throws {
        guard !SystemCall.exists(destination) else {
            throw JournalError(.alreadyExists, "the journal directory already exists here; it is not received again", path: destination)
        }
        try discard()
        try SystemCall.makeDirectory(incoming)
        try SystemCall.syncDirectory(SystemCall.parentDirectory(incoming))
    }

    /// Writes `chunk` into its file after checking it. A chunk must start at the file's current
    /// end; one that repeats bytes already written (a retried request) is accepted when they are
    /// the same bytes, and changes nothing.
    /// - Throws: `JournalError` `transfer_rejected` (nothing written) for a name that is not a
    ///   plain file name or is reserved, a chunk over `JournalChunk.maxBytes`, a checksum that
    ///   does not match the bytes, an offset other than the file's end, or no copy begun; `io`
    ///   or `write_failed` when the disk refuses.
    public func write(_ chunk: JournalChunk) throws {
        guard TransferredName.isAcceptable(chunk.file) else {
            throw rejection("the file name \(String(reflecting: chunk.file)) is not a plain, unreserved file name")
        }
        guard chunk.bytes.count <= JournalChunk.maxBytes else {
            throw rejection("the chunk is \(chunk.bytes.count) bytes; the limit is \(JournalChunk.maxBytes)", file: chunk.file)
        }
        guard CRC32C.checksum(chunk.bytes) == chunk.crc32c else {
            throw rejection("the chunk's CRC-32C does not match its bytes", file: chunk.file, offset: chunk.offset)
        }
        guard SystemCall.isDirectory(incoming) else { throw rejection("no copy has begun (no incoming directory)") }
        let path = incoming + "/" + chunk.file
        let fd = try SystemCall.open(path, O_RDWR | O_CREAT | O_NOFOLLOW)
        defer { close(fd) }
        let size = try SystemCall.size(fd, path: path)
        let end = chunk.offset + UInt64(chunk.bytes.count)
        if chunk.offset == size {
            try chunk.bytes.withUnsafeBytes { try SystemCall.write(fd, $0, at: chunk.offset, path: path) }
        } else if try end > size || checksum(fd, path: path, from: chunk.offset, count: chunk.bytes.count) != chunk.crc32c {
            throw rejection("the chunk starts at \(chunk.offset) but the file holds \(size) bytes", file: chunk.file, offset: chunk.offset)
        }
    }

    /// Checks that the incoming copy holds exactly the files of `summaries` with their lengths
    /// and checksums, makes every file and the directory durable, and renames it to `received`
    /// durably. Finishing a copy already received checks nothing and succeeds.
    /// - Throws: `JournalError` `transfer_rejected` naming the first difference (the copy stays
    ///   incoming), `io` when a file cannot be read.
    public func finish(expecting summaries: [JournalFileSummary]) throws {
        if !SystemCall.exists(incoming) && SystemCall.isDirectory(received) { return }
        guard SystemCall.isDirectory(incoming) else { throw rejection("no copy has begun (no incoming directory)") }
        try verify(incoming, holds: summaries, syncing: true)
        try SystemCall.syncDirectory(incoming)
        try SystemCall.renameDurably(incoming, to: received)
    }

    /// Makes the received copy the journal directory `destination`, durably, after checking once
    /// more that it holds exactly the files of `summaries`: an adopt names the copy it means, so
    /// a copy left from another, abandoned move is never adopted by mistake. Returns `false` when
    /// `destination` already exists and no copy waits (a repeated adopt), `true` when this call
    /// adopted the copy.
    /// - Throws: `JournalError` `transfer_rejected` when there is no copy or it differs from
    ///   `summaries`, `already_exists` when `destination` exists beside one.
    @discardableResult
    public func adopt(expecting summaries: [JournalFileSummary]) throws -> Bool {
        let exists = SystemCall.exists(destination)
        guard SystemCall.isDirectory(received) else {
            if exists { return false }
            throw rejection("there is no complete, verified copy to adopt")
        }
        guard !exists else {
            throw JournalError(.alreadyExists, "the journal directory exists beside a received copy; adopt nothing", path: destination)
        }
        try verify(received, holds: summaries, syncing: false)
        try SystemCall.renameDurably(received, to: destination)
        return true
    }

    /// Removes every unadopted copy (incoming or received), durably; `destination` is untouched.
    public func discard() throws {
        try SystemCall.removeDirectoryDurably(incoming)
        try SystemCall.removeDirectoryDurably(received)
    }

    /// Checks that `directory` holds exactly the files of `summaries`, with their lengths and
    /// checksums; with `syncing`, makes each file durable too.
    private func verify(_ directory: String, holds summaries: [JournalFileSummary], syncing: Bool) throws {
        let export = try JournalExport(directory: directory)
        let expected = summaries.map(\.file).sorted()
        guard export.files == expected else {
            throw rejection("the copy holds the files \(export.files) but the sender read \(expected)")
        }
        for summary in summaries {
            let path = directory + "/" + summary.file
            let fd = try SystemCall.open(path, O_RDONLY)
            defer { close(fd) }
            let size = try SystemCall.size(fd, path: path)
            let crc = try checksum(fd, path: path, from: 0, count: Int(size))
            guard size == summary.bytes, crc == summary.crc32c else {
                throw rejection("the copy has \(size) bytes with CRC-32C \(crc); the sender read \(summary.bytes) with \(summary.crc32c)", file: summary.file)
            }
            if syncing { try SystemCall.sync(fd, path: path, metadata: true) }
        }
    }

    private func checksum(_ fd: Int32, path: String, from offset: UInt64, count: Int) throws -> UInt32 {
        var crc: UInt32 = 0
        var buffer = [UInt8](repeating: 0, count: min(max(count, 1), JournalChunk.maxBytes))
        var done = 0
        while done < count {
            let want = min(buffer.count, count - done)
            let got = try buffer.withUnsafeMutableBytes {
                try SystemCall.read(fd, into: $0.baseAddress!, count: want, at: offset + UInt64(done), path: path)
            }
            guard got > 0 else { throw rejection("the file ended at \(offset + UInt64(done)) bytes, before the range to check", file: path) }
            crc = CRC32C.checksum(buffer[0..<got], continuing: crc)
            done += got
        }
        return crc
    }

    private func rejection(_ message: String, file: String? = nil, offset: UInt64? = nil) -> JournalError {
        JournalError(.transferRejected, message, path: file.map { incoming + "/" + $0 } ?? incoming, offset: offset)
    }
}
