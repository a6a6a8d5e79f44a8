import Foundation
import LyceumLifecycle
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LyceumLogging

/// What a compaction did.
public struct CompactionReport: Sendable, Equatable {
    /// The journal's size before, in bytes.
    public let bytesBefore: UInt64
    /// The new journal's size when it replaced the old one, in bytes.
    public let bytesAfter: UInt64
    /// The sequence number the snapshot reflects.
    public let snapshotSequence: UInt64
    /// The changes written to the snapshot (the live entities).
    public let snapshotChanges: Int
    /// Records committed while the snapshot was being written, carried over after it.
    public let recordsCarriedOver: UInt64
}

extension Journal {
    /// Replaces the journal with the live state plus the records committed since, so that it
    /// stops growing without bound. Writers keep going meanwhile, pausing only for the final
    /// sync and rename.
    ///
    /// `capture` must take the lock under which the caller appends and applies, and return a
    /// copy of its state (cheap for copy-on-write values) together with `lastSequence` read under
    /// that same lock; it throws to refuse the compaction, e.g. when the state could not take a
    /// change the journal holds, which a snapshot of it would drop. The snapshot is built from the
    /// copy without holding any lock. Steps: write
    /// the snapshot to a temporary file, append the records committed meanwhile, sync it, rename
    /// it over the journal, sync the directory. A crash at any step leaves either the old or the
    /// new journal, both complete; the next `open` removes the temporary file.
    @discardableResult
    public func compact(
        progress: ((JournalProgress) -> Void)? = nil,
        capture: () throws -> (state: any JournalState, sequence: UInt64)
    ) throws -> CompactionReport {
        try writer.withLock { state in
            guard !state.isClosed else { throw JournalError(.closed, "the journal is closed", path: state.file.path) }
            guard !state.isCompacting else { throw JournalError(.compactionRejected, "a compaction is already running", path: state.file.path) }
            state.isCompacting = true
        }
        defer { writer.withLock { $0.isCompacting = false } }
        return try compactClaimed(progress: progress, capture: capture)
    }

    /// Lets `append` start a compaction on a background thread whenever `isCompactionDue`;
    /// `capture` has the same contract as in `compact(progress:capture:)`.
    public func enableAutomaticCompaction(capture: @escaping @Sendable () throws -> (state: any JournalState, sequence: UInt64)) {
        writer.withLock { $0.automaticCompaction = capture }
    }

    /// Runs an automatic compaction; `append` has already claimed it.
    func compactInBackground() {
        let thread = Thread { [self] in
            Thread.nameCurrent("journal-compaction")
            // Appends made while this compaction runs can make another one due, and no later
            // append may come to start it: so go again until the journal is no longer due,
            // deciding that and releasing the claim under one lock.
            let release = { self.writer.withLock { $0.isCompacting = false } }
            var compactAgain = true
            while compactAgain {
                guard let capture = writer.withLock({ $0.automaticCompaction }) else { return release() }
                do {
                    let report = try compactClaimed(progress: nil, capture: capture)
                    Logger.journal.info("automatic compaction finished", [
                        "bytes_before": String(report.bytesBefore), "bytes_after": String(report.bytesAfter),
                    ])
                } catch {
                    Logger.journal.error("automatic compaction failed; the journal is unchanged", ["error": "\(error)"])
                    return release()
                }
                compactAgain = writer.withLock { state in
                    let due = Self.compactionDue(state, options)
                    if !due { state.isCompacting = false }
                    return due
                }
            }
        }
        thread.start()
    }

    private func compactClaimed(
        progress: ((JournalProgress) -> Void)?, capture: () throws -> (state: any JournalState, sequence: UInt64)
    ) throws -> CompactionReport {
        let (oldFile, startOffset, startSequence, bytesBefore) = writer.withLock {
            ($0.file, $0.endOffset, $0.lastSequence, $0.endOffset)
        }
        let captured = try capture()
        let current = lastSequence
        guard captured.sequence >= startSequence, captured.sequence <= current else {
            throw JournalError(.compactionRejected, "the captured state reflects sequence \(captured.sequence), outside \(startSequence)...\(current): capture it under the lock that orders appends", path: oldFile.path, sequence: captured.sequence)
        }
        let hook = options.compactionStepHook

        let fd = try SystemCall.open(paths.temporary, O_RDWR | O_CREAT | O_TRUNC)
        var handedOver = false
        defer {
            if !handedOver {
                Glibc.close(fd)
                do { try SystemCall.removeIfPresent(paths.temporary) } catch {
                    Logger.journal.error("cannot remove the temporary file of a failed compaction; the next start will", ["error": "\(error)"])
                }
            }
        }
        let output = BufferedFileWriter(fd: fd, path: paths.temporary)
        let (snapshotBytes, snapshotChanges) = try Self.writeSnapshot(of: captured.state, sequence: captured.sequence, to: output, progress: progress)

        // Carry over what was committed meanwhile, without blocking writers, until little is left.
        var copied = startOffset
        var nextSequence = captured.sequence + 1
        while true {
            let end = writer.withLock { $0.endOffset }
            guard end - copied > 1 << 20 else { break }
            copied = try carryOver(from: oldFile, range: copied..<end, after: captured.sequence, next: &nextSequence, to: output)
        }
        try output.flush()
        hook?(.snapshotWritten)
        try SystemCall.sync(fd, path: paths.temporary)

        let (bytesAfter, sequenceAtSwap) = try writer.withLock { state in
            copied = try carryOver(from: oldFile, range: copied..<state.endOffset, after: captured.sequence, next: &nextSequence, to: output)
            try output.flush()
            try SystemCall.sync(fd, path: paths.temporary)
            hook?(.beforeRename)
            try SystemCall.rename(paths.temporary, to: paths.journal)
            handedOver = true
            hook?(.afterRename)
            state.file = JournalFile(fd: fd, path: paths.journal)
            state.endOffset = output.count
            state.durableEnd = output.count
            do throws(JournalError) {
                try SystemCall.syncDirectoryOrStop(directory, outcome: "the compacted journal is renamed into place but may not last; writes refused")
            } catch {
                // The rename cannot be taken back: the journal refuses writes until the process stops.
                state.failure = error
                throw error
            }
            // A rollback still owed to the old file does not concern the new one, which holds
            // exactly the records through `endOffset`.
            state.pendingRollback = false
            state.base = captured.sequence
            state.snapshotBytes = snapshotBytes
            // Under the writer's lock, like every append's report, so no older value overwrites a newer one.
            metrics.file(size: output.count, lastSequence: state.lastSequence)
            return (output.count, state.lastSequence)
        }
        durability.markDurable(through: sequenceAtSwap)
        progress?(JournalProgress(phase: .compaction, bytesDone: bytesAfter, bytesTotal: bytesAfter))
        Logger.journal.info("compacted the journal", [
            "path": paths.journal, "bytes_before": String(bytesBefore), "bytes_after": String(bytesAfter),
            "snapshot_seq": String(captured.sequence), "live_changes": String(snapshotChanges),
        ])
        return CompactionReport(
            bytesBefore: bytesBefore, bytesAfter: bytesAfter, snapshotSequence: captured.sequence,
            snapshotChanges: snapshotChanges, recordsCarriedOver: nextSequence - captured.sequence - 1)
    }

    /// Writes the header and the snapshot parts; returns their size and how many changes they hold.
    ///
    /// The header counts the parts, so a first walk over the state's snapshot splits it and a
    /// second writes it: only one part is ever held in memory, where a snapshot of a million
    /// books held as one array took about as much memory again as the books.
    static func writeSnapshot(
        of state: any JournalState, sequence: UInt64, to output: BufferedFileWriter,
        progress: ((JournalProgress) -> Void)?
    ) throws -> (bytes: UInt64, changes: Int) {
        // Parts of about 1 MiB keep every line far below the record size limit.
        let partBytes = 1 << 20
        var partCounts: [Int] = []
        var inPart = 0
        var size = 0
        var total = 0
        try state.forEachSnapshotChange { change in
            // A state that hands back a malformed value must not get it into a snapshot, where it
            // would make the journal unreadable; the compaction fails instead.
            try RecordFormat.validate(change)
            let length = RecordFormat.encodedLength(of: change) + 1
            if size + length > partBytes, inPart > 0 {
                partCounts.append(inPart)
                inPart = 0
                size = 0
            }
            inPart += 1
            size += length
            total += length
        }
        if inPart > 0 { partCounts.append(inPart) }
        let changeCount = partCounts.reduce(0, +)

        try output.write(RecordFormat.line(.header(version: RecordFormat.version, base: sequence, parts: UInt64(partCounts.count)), body: []))
        var body: [UInt8] = []
        var part: [JournalChange] = []
        var written = 0
        func writePart() throws {
            body.removeAll(keepingCapacity: true)
            RecordFormat.appendChanges(part, to: &body)
            try output.write(RecordFormat.line(.snapshot(part: UInt64(written)), body: body))
            part.removeAll(keepingCapacity: true)
            written += 1
            progress?(JournalProgress(phase: .compaction, bytesDone: output.count, bytesTotal: UInt64(total)))
        }
        var seen = 0
        try state.forEachSnapshotChange { change in
            seen += 1
            guard written < partCounts.count, seen <= changeCount else { return }
            part.append(change)
            if part.count == partCounts[written] { try writePart() }
        }
        guard seen == changeCount, written == partCounts.count else {
            throw JournalError(.compactionRejected, "the state's snapshot changed between two walks (\(changeCount) changes, then \(seen))", path: output.path)
        }
        return (output.count, changeCount)
    }

    /// Copies the records in `range` of `file` whose sequence numbers follow `sequence`; returns
    /// where it stopped (the end of the range).
    private func carryOver(
        from file: JournalFile, range: Range<UInt64>, after sequence: UInt64, next: inout UInt64,
        to output: BufferedFileWriter
    ) throws -> UInt64 {
        guard !range.isEmpty else { return range.lowerBound }
        let reader = LineReader(fd: file.fd, path: file.path, from: range.lowerBound, limit: range.upperBound)
        var parser = LineParser()
        var scratch: [JournalChange] = []
        let newline: [UInt8] = [0x0A]
        while let line = try reader.next() {
            scratch.removeAll(keepingCapacity: true)
            guard line.terminated, case let .record(found)? = parser.parse(line.bytes, into: &scratch) else {
                throw JournalError(.midJournalCorruption, "a record written during compaction no longer verifies", path: file.path, offset: line.offset, sequence: next)
            }
            guard found > sequence else { continue }
            guard found == next else {
                throw JournalError(.sequenceGap, "found sequence \(found) while carrying records over", path: file.path, offset: line.offset, sequence: next)
            }
            try output.write(line.bytes)
            try newline.withUnsafeBytes { try output.write($0) }
            next += 1
        }
        return range.upperBound
    }
}
