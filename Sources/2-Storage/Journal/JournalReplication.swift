import Foundation

/// One record of a journal as its line: what a leader ships to its followers, byte for byte
/// (sequence number, changes and checksum included), so that every replica's journal holds the
/// same bytes.
public struct ReplicatedRecord: Sendable, Equatable {
    /// The record's sequence number.
    public let sequence: UInt64
    /// The whole line, its checksum and newline included.
    public let line: [UInt8]

    /// Checks a line received from a leader: a complete record line (ending in its newline) whose
    /// checksum matches and whose changes are in the journal's exact format.
    /// - Throws: `invalidRecord` naming what is wrong; nothing is written anywhere.
    public init(line: [UInt8]) throws {
        guard line.count <= RecordFormat.maximumLineBytes, line.last == 0x0A else {
            throw JournalError(.invalidRecord, "a replicated record must be one line ending in a newline, at most \(RecordFormat.maximumLineBytes) bytes")
        }
        var parser = LineParser()
        var changes: [JournalChange] = []
        let kind = line.withUnsafeBytes { parser.parse(UnsafeRawBufferPointer(rebasing: $0.dropLast()), into: &changes) }
        guard case .record(let sequence)? = kind else {
            throw JournalError(.invalidRecord, "the line is damaged (its checksum does not match) or is not a record")
        }
        self.sequence = sequence
        self.line = line
    }

    /// The record's changes, in order.
    public func changes() -> [JournalChange] {
        var parser = LineParser()
        var changes: [JournalChange] = []
        _ = line.withUnsafeBytes { parser.parse(UnsafeRawBufferPointer(rebasing: $0.dropLast()), into: &changes) }
        return changes
    }
}

extension Journal {
    /// Appends a leader's record unchanged: it must be the record right after `lastSequence`.
    /// The caller applies `record.changes()` to its state under the same lock, as with `append`.
    /// - Throws: `invalidRecord` (with the expected sequence) when it does not follow; the
    ///   errors of `append` otherwise. Nothing is written when it throws.
    public func appendReplicated(_ record: ReplicatedRecord) throws -> PendingWrite {
        try write { sequence in
            guard record.sequence == sequence else {
                throw JournalError(.invalidRecord, "record \(record.sequence) does not follow the journal's last (\(sequence - 1))", path: paths.journal, sequence: sequence)
            }
            return record.line
        }
    }

    /// The sequence number the journal's snapshot reflects: records up to it can no longer be
    /// read one by one.
    public var snapshotSequence: UInt64 { writer.withLock { $0.base } }

    /// Cuts every record after `sequence` off the journal in `directory`, which no process may
    /// hold open (a returning replica drops the tail its new leader does not have, then opens the
    /// journal again, replaying what is left). The cut bytes are saved beside the journal first,
    /// as for a torn tail.
    /// - Returns: how many records were cut off.
    /// - Throws: `snapshotNeeded` when `sequence` is before the snapshot; `locked` when the journal is open.
    public static func truncate(directory: String, after sequence: UInt64) throws -> Int {
        let paths = JournalPaths(directory: directory)
        let lock = try DirectoryLock(path: paths.lock)
        defer { withExtendedLifetime(lock) {} }
        let fd = try SystemCall.open(paths.journal, O_RDWR)
        let file = JournalFile(fd: fd, path: paths.journal)
        let size = try SystemCall.size(fd, path: paths.journal)
        let (base, start) = try snapshotEnd(of: file, size: size)
        guard sequence >= base else {
            throw JournalError(.snapshotNeeded, "record \(sequence) is inside the snapshot (base \(base)): the tail cannot be cut there", path: paths.journal, sequence: sequence)
        }
        let reader = LineReader(fd: fd, path: paths.journal, from: start, limit: size)
        var parser = LineParser()
        var scratch: [JournalChange] = []
        var cut: UInt64?
        var count = 0
        while let line = try reader.next() {
            scratch.removeAll(keepingCapacity: true)
            guard line.terminated, case .record(let current)? = parser.parse(line.bytes, into: &scratch) else { break }
            if current > sequence {
                cut = cut ?? line.offset
                count += 1
            }
        }
        guard let cut else { return 0 }
        try cutTornTail(file, at: cut, size: size, paths: paths, message: "cut off \(count) records after \(sequence): a replica's tail its leader does not have")
        return count
    }

    /// The snapshot's sequence number and where the records after it start.
    static func snapshotEnd(of file: JournalFile, size: UInt64) throws -> (base: UInt64, offset: UInt64) {
        let reader = LineReader(fd: file.fd, path: file.path, limit: size)
        var parser = LineParser()
        var scratch: [JournalChange] = []
        guard let first = try reader.next(), first.terminated, case let .header(_, base, parts)? = parser.parse(first.bytes, into: &scratch) else {
            throw JournalError(.invalidHeader, "the first line is not a valid lyceum-journal header", path: file.path, offset: 0)
        }
        for _ in 0..<parts {
            guard let line = try reader.next(), line.terminated else {
                throw JournalError(.corruptSnapshot, "the snapshot is incomplete", path: file.path, offset: reader.position)
            }
        }
        return (base, reader.position)
    }
}

/// Reads a journal's records after a sequence number, as their lines, for a leader to ship to a
/// follower: the reader keeps its place, follows the journal across compactions, and reads only
/// complete records.
public final class JournalTail {
    private let journal: Journal
    private var file: JournalFile?
    private var offset: UInt64 = 0
    /// The sequence number of the last record handed out.
    public private(set) var sequence: UInt64

    /// A reader of the records after `sequence` (which may be the journal's last: it then waits
    /// for new ones).
    public init(journal: Journal, after sequence: UInt64) {
        self.journal = journal
        self.sequence = sequence
    }

    /// How many bytes the journal holds after the last record handed out: what a follower
    /// reading through this tail still lacks. Before the first read (or once a compaction
    /// replaced the file) the whole file counts, as the place in it is not known yet.
    public var bytesBehind: UInt64 {
        let (current, end) = journal.writer.withLock { ($0.file, $0.endOffset) }
        return file === current ? end - min(offset, end) : end
    }

    /// The next records, at most `maxRecords` and `maxBytes` of lines (at least one record when
    /// any is there).
    /// - Throws: `snapshotNeeded` when the records after `sequence` were compacted away.
    public func next(maxBytes: Int, maxRecords: Int = .max) throws -> [ReplicatedRecord] {
        let (current, end, base) = journal.writer.withLock { ($0.file, $0.endOffset, $0.base) }
        if file !== current {
            // First read, or a compaction replaced the file: find our place in the new one.
            guard sequence >= base else {
                throw JournalError(.snapshotNeeded, "the records after \(sequence) were compacted into the snapshot (base \(base))", path: current.path, sequence: sequence)
            }
            offset = try Journal.snapshotEnd(of: current, size: end).offset
            file = current
            if sequence > base {
                let skipped = try read(from: current, end: end, maxBytes: .max, maxRecords: .max) { $0 <= self.sequence }
                guard skipped.last?.sequence == sequence || sequence == base else {
                    throw JournalError(.invalidRecord, "record \(sequence) is not in the journal", path: current.path, sequence: sequence)
                }
            }
        }
        let records = try read(from: current, end: end, maxBytes: maxBytes, maxRecords: maxRecords) { _ in true }
        if let last = records.last { sequence = last.sequence }
        return records
    }

    /// Reads lines from `offset` while `wanted` holds for their sequence, advancing `offset`.
    private func read(from file: JournalFile, end: UInt64, maxBytes: Int, maxRecords: Int, while wanted: (UInt64) -> Bool) throws -> [ReplicatedRecord] {
        guard offset < end else { return [] }
        let reader = LineReader(fd: file.fd, path: file.path, from: offset, limit: end)
        var records: [ReplicatedRecord] = []
        var bytes = 0
        while let line = try reader.next() {
            guard line.terminated else { throw JournalError(.invalidRecord, "an unterminated line", path: file.path, offset: line.offset) }
            let record = try ReplicatedRecord(line: Array(line.bytes) + [0x0A])
            guard wanted(record.sequence), records.count < maxRecords else { break }
            if !records.isEmpty, bytes + record.line.count > maxBytes { break }
            records.append(record)
            bytes += record.line.count
            offset = reader.position
        }
        return records
    }
}
