import DurableFiles
import Foundation
import LyceumLogging
import LyceumSupport
import Synchronization

/// An append-only, checksummed JSON Lines journal in a data directory, owned by one process.
///
/// The journal stores transactions of `JournalChange`s and never interprets their values; the
/// caller's `JournalState` holds what they mean. The write path is split so that no lock is held
/// across a sync:
///
/// ```swift
/// let pending = try stateLock.withLock { state in      // the caller's lock orders writes
///     let pending = try journal.append(changes)        // written to the file, sequence assigned
///     for change in changes { state.apply(change) }    // applied only after the write succeeded
///     return pending
/// }
/// let acknowledgement = pending.waitUntilDurable()     // durable per policy; only now reply
/// ```
///
/// A thread that must not wait registers a callback instead, outside the lock:
/// `pending.whenDurable { acknowledgement in reply(…) }`. Under `always` it runs after a sync
/// that covers the record: at the end of the caller's `BatchedSignals` batch, on the caller's
/// thread, when it runs one (one sync for the batch's records; while syncs are slow, the batch
/// goes to the acknowledger thread); otherwise on the journal's acknowledger thread.
///
/// Appends must happen under the same caller lock as the state updates, so that the state always
/// reflects exactly the records through `lastSequence` while that lock is held. With many more
/// writer threads than cores, make that a lock that puts waiters to sleep (`LyceumSupport.Monitor`,
/// a pthread mutex): Synchronization's `Mutex` spins first, and 64 writers on 2 cores measured 20
/// times slower with it.
public final class Journal: Sendable {
    /// The data directory.
    public let directory: String
    /// The options the journal was opened with.
    public let options: JournalOptions

    let paths: JournalPaths
    let writer: Mutex<WriterState>
    let durability: DurabilityTracker
    /// This journal's series in the process's metrics.
    let metrics: JournalMetrics
    let acknowledger = Acknowledger()
    let batchAcknowledger = BatchAcknowledger()
    private let intervalSyncer: Mutex<IntervalSyncer?>

    struct WriterState {
        var file: JournalFile
        /// Where the next record goes: the end of the last record written successfully.
        var endOffset: UInt64
        var lastSequence: UInt64
        /// The sequence number the file's snapshot reflects.
        var base: UInt64
        /// The size of the header and snapshot: the live data at the last compaction.
        var snapshotBytes: UInt64
        /// Where the last successful sync of `file` ended: everything before it is on disk.
        var durableEnd: UInt64
        /// Set when a sync of the journal failed: every later write is refused with it, and
        /// nothing the sync did not cover is acknowledged (``syncCurrentFile()``).
        var failure: JournalError?
        /// Set when rolling back a failed write could not truncate the file; retried first.
        var pendingRollback: Bool = false
        var appends: UInt64 = 0
        var isCompacting = false
        /// Set when `close()` begins: no appends or compactions start after it.
        var isClosed = false
        var lock: DirectoryLock?
        var automaticCompaction: (@Sendable () throws -> (state: any JournalState, sequence: UInt64))?
    }

    /// Opens (creating if needed) the journal in `directory`, recovers it, and replays every
    /// committed change into `state`, in order.
    ///
    /// Recovery follows `protocol/journal.md`: a torn last record is cut off (its bytes saved
    /// beside the journal, with a warning); mid-journal corruption, a sequence gap or a damaged
    /// header or snapshot makes this throw, leaving the files and `state` unchanged.
    /// Leftovers of an interrupted compaction are removed. Only one process can hold a data
    /// directory open at a time; another one gets a `locked` error naming the holder's PID.
    public static func open<State: JournalState>(
        directory: String, options: JournalOptions = JournalOptions(), state: inout State,
        progress: ((JournalProgress) -> Void)? = nil
    ) throws -> Journal {
        let paths = JournalPaths(directory: directory)
        let missing = SystemCall.missingDirectories(directory)
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw JournalError(.io, "cannot create the data directory: \(error.localizedDescription)", path: directory)
        }
        // A new directory's entry is durable only once its parent is synced: without this, a
        // power loss could take a fresh data directory with every journal acknowledged in it
        // (found by issue 36's power-loss filesystem).
        for made in missing {
            try SystemCall.syncDirectoryOrStop(SystemCall.parentDirectory(made), outcome: "the journal was not opened: its new directory's entry is not durable")
        }
        let lock = try DirectoryLock(path: paths.lock)
        if SystemCall.exists(paths.temporary) {
            try SystemCall.removeIfPresent(paths.temporary)
            try SystemCall.syncDirectory(directory)
            Logger.journal.info("removed the leftover of an interrupted compaction", ["path": paths.temporary])
        }
        if !SystemCall.exists(paths.journal) {
            try create(paths)
        }
        let fd = try SystemCall.open(paths.journal, O_RDWR)
        let file = JournalFile(fd: fd, path: paths.journal)
        var replayed = state
        let scan = try JournalScanner.scan(fd: fd, path: paths.journal, into: &replayed, progress: progress)
        if let problem = scan.problem {
            guard problem.code == .tornTail else { throw problem }
            try cutTornTail(file, at: scan.validEnd, size: scan.fileSize, paths: paths)
        }
        state = replayed
        Logger.journal.info("journal opened", [
            "path": paths.journal, "records": String(scan.records), "last_seq": String(scan.lastSequence),
            "bytes": String(scan.validEnd), "durability": options.durability.description,
        ])
        return Journal(paths: paths, options: options, lock: lock, file: file, scan: scan)
    }

    private init(paths: JournalPaths, options: JournalOptions, lock: DirectoryLock, file: JournalFile, scan: JournalScan) {
        self.paths = paths
        self.directory = paths.directory
        self.options = options
        writer = Mutex(WriterState(
            file: file, endOffset: scan.validEnd, lastSequence: scan.lastSequence, base: scan.base,
            snapshotBytes: scan.snapshotBytes, durableEnd: scan.validEnd, lock: lock))
        metrics = JournalMetrics(dimensions: options.metricDimensions)
        metrics.file(size: scan.validEnd, lastSequence: scan.lastSequence)
        durability = DurabilityTracker(durableSequence: scan.lastSequence, metrics: metrics)
        intervalSyncer = Mutex(nil)
        if case let .interval(milliseconds) = options.durability {
            let syncer = IntervalSyncer(milliseconds: milliseconds) { [weak self] in
                guard let self else { return false }
                // A failed sync is final (the journal refuses writes from then on): the thread ends.
                do { try self.durability.waitUntilDurable(self.lastSequence, sync: self.syncCurrentFile) } catch { return false }
                return true
            }
            intervalSyncer.withLock { $0 = syncer }
        }
    }

    deinit {
        intervalSyncer.withLock { $0?.stop() }
        acknowledger.finish()
    }

    /// The sequence number of the last record appended (or the snapshot's, if none since).
    public var lastSequence: UInt64 { writer.withLock { $0.lastSequence } }

    /// The journal file's current size in bytes.
    public var size: UInt64 { writer.withLock { $0.endOffset } }

    /// A handle to wait, once more, for the durability of a record already appended, e.g. the
    /// last record before a retried write that changes nothing replies; `nil` for a sequence
    /// number not appended yet.
    public func pendingWrite(sequence: UInt64) -> PendingWrite? {
        sequence <= lastSequence ? PendingWrite(journal: self, sequence: sequence) : nil
    }

    /// Whether the journal has outgrown the live data by the configured ratio, so that
    /// compacting it would pay off.
    public var isCompactionDue: Bool { writer.withLock { Self.compactionDue($0, options) } }

    /// Writes one atomic transaction of `changes` to the file and assigns it the next sequence
    /// number. Returns before the record is durable: reply to the writer only with what
    /// `PendingWrite.waitUntilDurable()` returns or `PendingWrite.whenDurable(_:)` hands over.
    ///
    /// On any write error (such as a full disk) the file is cut back to the end of the last good
    /// record and this throws `writeFailed`; nothing changed, and later appends work again once
    /// the cause is gone. Malformed changes throw `invalidChange` before anything is written;
    /// `check` says how deeply values are verified (see `ValueCheck`).
    public func append(_ changes: [JournalChange], checking check: ValueCheck = .full) throws -> PendingWrite {
        guard !changes.isEmpty else { throw JournalError(.invalidChange, "a record needs at least one change") }
        var body: [UInt8] = []
        body.reserveCapacity(changes.reduce(16) { $0 + RecordFormat.lengthEstimate(of: $1) + 1 })
        for change in changes { try RecordFormat.validate(change, check) }
        RecordFormat.appendChanges(changes, to: &body)
        let limit = min(options.maximumRecordBytes, RecordFormat.maximumLineBytes - RecordFormat.lineOverhead)
        guard body.count <= limit else {
            throw JournalError(.recordTooLarge, "the record is \(body.count) bytes, more than the maximum of \(limit)")
        }
        return try write { sequence in RecordFormat.line(.record(sequence: sequence), body: body) }
    }

    /// Writes the line `makeLine` builds for the next sequence number, under the writer's lock:
    /// the one write path of `append` and `appendReplicated`.
    func write(_ makeLine: (UInt64) throws -> [UInt8]) throws -> PendingWrite {
        let (pending, startCompaction) = try writer.withLock { state in
            guard !state.isClosed else { throw JournalError(.closed, "the journal is closed", path: state.file.path) }
            if let failure = state.failure { throw failure }
            if state.pendingRollback {
                try SystemCall.truncate(state.file.fd, to: state.endOffset, path: state.file.path)
                state.pendingRollback = false
            }
            let sequence = state.lastSequence + 1
            let line = try makeLine(sequence)
            do {
                try line.withUnsafeBytes { try SystemCall.write(state.file.fd, $0, at: state.endOffset, path: state.file.path) }
            } catch let error as JournalError {
                rollBack(&state)
                let full = error.isStorageFull
                metrics.writeFailed(full: full)
                // Rate-limited by the logger (per message), so a full disk under load writes a
                // few lines a second, not one per refused request.
                Logger.journal.error(full ? "the file system is full: a write was refused and rolled back" : "a write failed and was rolled back", [
                    "path": state.file.path, "offset": String(state.endOffset), "errno": String(error.systemError ?? 0), "error": error.message,
                ])
                throw JournalError(.writeFailed, "the record was not written and has been rolled back: \(error.message)",
                                   path: state.file.path, offset: state.endOffset, sequence: sequence, systemError: error.systemError)
            }
            state.endOffset += UInt64(line.count)
            state.lastSequence = sequence
            state.appends += 1
            metrics.appended()
            metrics.file(size: state.endOffset, lastSequence: sequence)
            let startCompaction = state.automaticCompaction != nil && !state.isCompacting && Self.compactionDue(state, options)
            if startCompaction { state.isCompacting = true }
            return (PendingWrite(journal: self, sequence: sequence), startCompaction)
        }
        if startCompaction { compactInBackground() }
        return pending
    }

    /// Cuts the file back to the last good record after a failed write; if even that fails, the
    /// next append retries before writing (records always go at `endOffset`, so the garbage can
    /// never end up between two valid records).
    private func rollBack(_ state: inout WriterState) {
        do {
            try SystemCall.truncate(state.file.fd, to: state.endOffset, path: state.file.path)
        } catch {
            state.pendingRollback = true
            Logger.journal.error("cannot roll back a failed write yet; will retry before the next one", [
                "path": state.file.path, "offset": String(state.endOffset), "error": "\(error)",
            ])
        }
    }

    /// Makes everything written so far durable, runs every outstanding `whenDurable` callback,
    /// then closes the journal and releases the data directory's lock. After a failed sync, no
    /// sync is tried again: the callbacks of records it did not cover get the failure. Appends fail with `closed`
    /// afterwards; a `whenDurable` callback registered afterwards runs at once on its caller's thread.
    /// A running compaction finishes first, so that no rename can happen once the lock is gone.
    /// Called from a `whenDurable` callback, it returns before the callbacks still waiting have
    /// run; they run as soon as the current callback returns.
    public func close() {
        intervalSyncer.withLock { $0?.stop() }
        writer.withLock { $0.isClosed = true }
        while writer.withLock({ $0.isCompacting }) { usleep(1000) }
        do {
            try durability.waitUntilDurable(lastSequence, sync: syncCurrentFile)
        } catch {
            // Already reported to `StorageFailure` by the sync that failed; the callbacks below get it.
            Logger.journal.debug("closing after a failed sync", ["path": paths.journal, "error": "\(error)"])
        }
        batchAcknowledger.acknowledge(self, closing: true)
        acknowledger.finish()
        writer.withLock { $0.lock = nil }
    }

    /// How many records were appended and how many syncs made them durable since the journal
    /// was opened; with concurrent writers under `always`, group commit keeps syncs below appends.
    public var statistics: JournalStatistics {
        JournalStatistics(appends: writer.withLock { $0.appends }, syncs: durability.syncs)
    }

    /// Syncs the current file and returns the last sequence number the sync covers.
    ///
    /// A failed sync is final (`DurableFile`'s policy): the journal refuses every later write,
    /// cuts the file back to where the last successful sync ended, and reports the failure to
    /// `StorageFailure`, which stops the process. The cut drops the pages that Linux may have
    /// marked clean without writing them, so that the next start cannot replay records whose
    /// sync failed from the page cache, nor a later power loss leave a hole mid-journal
    /// (protocol/journal.md, *A failed sync*).
    func syncCurrentFile() throws(JournalError) -> UInt64 {
        let (file, sequence, end) = try writer.withLock { (state) throws(JournalError) in
            if let failure = state.failure { throw failure }
            return (state.file, state.lastSequence, state.endOffset)
        }
        do {
            try DurableFile.syncData(file.fd, path: file.path)
        } catch {
            throw refuseWrites(after: error, syncing: file)
        }
        writer.withLock { state in
            if state.file === file { state.durableEnd = max(state.durableEnd, end) }
        }
        return sequence
    }

    /// Refuses writes from now on, cuts `file` back to its last synced end, and reports the
    /// failed sync; returns the error every waiter it did not cover gets.
    private func refuseWrites(after error: DurableFileError, syncing file: JournalFile) -> JournalError {
        let failure = JournalError(error)
        let outcome = writer.withLock { state -> String in
            if state.failure == nil { state.failure = failure }
            guard state.file === file, state.durableEnd < state.endOffset else { return "nothing unsynced to cut back; writes refused" }
            let unsynced = state.endOffset - state.durableEnd
            do {
                try SystemCall.truncate(file.fd, to: state.durableEnd, path: file.path)
                return "cut \(unsynced) unsynced bytes off at byte \(state.durableEnd), where the last good sync ended; writes refused"
            } catch {
                return "could not cut \(unsynced) unsynced bytes off at byte \(state.durableEnd) (\(error)): the next start may replay records whose sync failed; writes refused"
            }
        }
        StorageFailure.stop(error, owner: "journal", outcome: outcome)
        return failure
    }

    func waitUntilDurable(_ sequence: UInt64) throws(JournalError) {
        guard options.durability == .always else { return }
        try durability.waitUntilDurable(sequence, sync: syncCurrentFile)
    }

    /// Runs `body` once record `sequence` is durable: under `always`, at the end of the caller's
    /// ``BatchedSignals`` batch on its own thread when it runs one (on the acknowledger thread
    /// while syncs are slow: `BatchAcknowledger`), else on the acknowledger thread; under the other policies, or once the journal is closed (everything is durable
    /// then), at once on the caller's thread.
    func whenDurable(_ sequence: UInt64, _ callback: DurabilityCallback) {
        if options.durability == .always,
           batchAcknowledger.register(sequence, of: self, callback) || acknowledger.register(sequence, of: self, callback) { return }
        do {
            try waitUntilDurable(sequence)
            callback.acknowledged(JournalAcknowledgement(sequence: sequence))
        } catch {
            callback.failed?(error)
        }
    }

    static func compactionDue(_ state: WriterState, _ options: JournalOptions) -> Bool {
        let threshold = max(options.compactionMinimumBytes, UInt64(options.compactionRatio * Double(state.snapshotBytes)))
        return state.endOffset > threshold
    }

    /// Writes a fresh journal (a header and nothing else) by the same build-sync-rename steps as
    /// compaction, so a crash can never leave a half-written header.
    private static func create(_ paths: JournalPaths) throws {
        let fd = try SystemCall.open(paths.temporary, O_RDWR | O_CREAT | O_TRUNC)
        defer { Glibc.close(fd) }
        let header = RecordFormat.line(.header(version: RecordFormat.version, base: 0, parts: 0), body: [])
        try header.withUnsafeBytes { try SystemCall.write(fd, $0, at: 0, path: paths.temporary) }
        try SystemCall.sync(fd, path: paths.temporary)
        try SystemCall.rename(paths.temporary, to: paths.journal)
        try SystemCall.syncDirectory(paths.directory)
        Logger.journal.info("created a new journal", ["path": paths.journal])
    }

    /// Saves the torn bytes beside the journal, durably, and only then cuts them off; `message`
    /// says why in the warning.
    static func cutTornTail(_ file: JournalFile, at offset: UInt64, size: UInt64, paths: JournalPaths, message: String = "cut off a torn last record") throws {
        let savedPath = paths.tornTail(at: offset)
        let saved = try SystemCall.open(savedPath, O_WRONLY | O_CREAT | O_EXCL)
        defer { Glibc.close(saved) }
        var copied: UInt64 = 0
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { chunk.deallocate() }
        while offset + copied < size {
            let count = try SystemCall.read(file.fd, into: chunk.baseAddress!, count: min(chunk.count, Int(size - offset - copied)), at: offset + copied, path: file.path)
            guard count > 0 else { break }
            try SystemCall.write(saved, UnsafeRawBufferPointer(rebasing: chunk[0..<count]), at: copied, path: savedPath)
            copied += UInt64(count)
        }
        try SystemCall.sync(saved, path: savedPath)
        try SystemCall.syncDirectory(paths.directory)
        try SystemCall.truncate(file.fd, to: offset, path: file.path)
        try SystemCall.sync(file.fd, path: file.path, metadata: true)
        Logger.journal.warning(message, [
            "path": file.path, "offset": String(offset), "bytes": String(size - offset), "saved_to": savedPath,
        ])
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
