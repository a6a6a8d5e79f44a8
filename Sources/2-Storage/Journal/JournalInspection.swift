/// What `Journal.check` found in a journal file, without changing anything.
public struct JournalReport: Sendable {
    /// The journal file.
    public let path: String
    /// Its size in bytes.
    public let fileSize: UInt64
    /// The sequence number its snapshot reflects (0 if never compacted).
    public let snapshotSequence: UInt64
    /// Snapshot parts read.
    public let snapshotParts: UInt64
    /// Valid records read after the snapshot.
    public let records: UInt64
    /// The last valid record's sequence number.
    public let lastSequence: UInt64
    /// Bytes up to the end of the last valid line.
    public let validBytes: UInt64
    /// The first problem, if any; nothing after it was read into the state.
    public let problem: JournalError?

    /// Whether the journal would open without any repair.
    public var isHealthy: Bool { problem == nil }
}

/// What `Journal.repair` did.
public struct JournalRepair: Sendable {
    /// The problem that was repaired, or nil if the journal was healthy and left untouched.
    public let problem: JournalError?
    /// Where the journal was backed up before it was changed.
    public let backupPath: String?
    /// The offset from which bytes were dropped.
    public let droppedFromOffset: UInt64
    /// How many bytes were dropped.
    public let droppedBytes: UInt64
    /// How many records were dropped, the damaged one included (whole lines; a torn tail counts one).
    public let droppedRecords: UInt64
}

extension Journal {
    /// Reads the journal in `directory` without changing or locking anything, replaying every
    /// valid change before the first problem into `state`.
    public static func check<State: JournalState>(
        directory: String, state: inout State, progress: ((JournalProgress) -> Void)? = nil
    ) throws -> JournalReport {
        let paths = JournalPaths(directory: directory)
        let fd = try SystemCall.open(paths.journal, O_RDONLY)
        let file = JournalFile(fd: fd, path: paths.journal)
        let scan = try JournalScanner.scan(fd: file.fd, path: file.path, into: &state, progress: progress)
        return JournalReport(
            path: paths.journal, fileSize: scan.fileSize, snapshotSequence: scan.base,
            snapshotParts: scan.snapshotParts, records: scan.records, lastSequence: scan.lastSequence,
            validBytes: scan.validEnd, problem: scan.problem)
    }

    /// Backs the journal in `directory` up, then cuts it at its first problem, so that it opens
    /// again with every record before that problem. Takes the directory's lock, so it refuses to
    /// run while a server has the journal open. A damaged header or snapshot cannot be repaired
    /// this way and throws.
    public static func repair(directory: String, progress: ((JournalProgress) -> Void)? = nil) throws -> JournalRepair {
        let paths = JournalPaths(directory: directory)
        let lock = try DirectoryLock(path: paths.lock)
        defer { withExtendedLifetime(lock) {} }
        let fd = try SystemCall.open(paths.journal, O_RDWR)
        let file = JournalFile(fd: fd, path: paths.journal)
        var discarded = DiscardingState()
        let scan = try JournalScanner.scan(fd: file.fd, path: file.path, into: &discarded, progress: progress)
        guard let problem = scan.problem else {
            return JournalRepair(problem: nil, backupPath: nil, droppedFromOffset: scan.validEnd, droppedBytes: 0, droppedRecords: 0)
        }
        guard problem.code != .invalidHeader, problem.code != .corruptSnapshot else { throw problem }
        let dropped = try countLines(file, from: scan.validEnd, to: scan.fileSize)
        let backupPath = paths.backup()
        try copy(file, size: scan.fileSize, to: backupPath)
        try SystemCall.syncDirectory(directory)
        try SystemCall.truncate(file.fd, to: scan.validEnd, path: file.path)
        try SystemCall.sync(file.fd, path: file.path, metadata: true)
        Logger.journal.warning("repaired the journal", [
            "path": file.path, "offset": String(scan.validEnd), "dropped_bytes": String(scan.fileSize - scan.validEnd),
            "dropped_records": String(dropped), "backup": backupPath,
        ])
        return JournalRepair(
            problem: problem, backupPath: backupPath, droppedFromOffset: scan.validEnd,
            droppedBytes: scan.fileSize - scan.validEnd, droppedRecords: dropped)
    }

    private static func countLines(_ file: JournalFile, from offset: UInt64, to end: UInt64) throws -> UInt64 {
        let reader = LineReader(fd: file.fd, path: file.path, from: offset, limit: end)
        var count: UInt64 = 0
        while try reader.next() != nil { count += 1 }
        return count
    }

    private static func copy(_ file: JournalFile, size: UInt64, to path: String) throws {
        let fd = try SystemCall.open(path, O_WRONLY | O_CREAT | O_EXCL)
        defer { Glibc.close(fd) }
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { chunk.deallocate() }
        var offset: UInt64 = 0
        while offset < size {
            let count = try SystemCall.read(file.fd, into: chunk.baseAddress!, count: min(chunk.count, Int(size - offset)), at: offset, path: file.path)
            guard count > 0 else { break }
            try SystemCall.write(fd, UnsafeRawBufferPointer(rebasing: chunk[0..<count]), at: offset, path: path)
            offset += UInt64(count)
        }
        try SystemCall.sync(fd, path: path)
    }
}

/// A state that ignores every change, for reading a journal only to verify it.
struct DiscardingState: JournalState {
    mutating func apply(_ change: JournalChange) {}
    func snapshot() -> [JournalChange] { [] }
}

#if canImport(Glibc)
import Glibc
import LyceumLogging
#elseif canImport(Darwin)
import Darwin
#endif
