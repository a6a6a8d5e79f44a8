import Foundation
import LyceumSupport

/// Reads, checksums and parses a journal's snapshot parts and records on a thread of its own,
/// ahead of the replay that applies them, so that on two cores reading the lines (`read`, line
/// splitting, CRC-32C, the changes' keys and values) overlaps the state decoding and storing
/// them (issue 26: about a third of a restart's CPU is the line work).
///
/// Lines come out in file order, in batches of about `batchBytes`, at most `queuedBatches` of
/// them waiting, so memory stays bounded however far the reader could run ahead. Reading stops
/// at the first line that is not the kind expected at its place (a damaged or unterminated line,
/// a record among the snapshot parts, a header or part among the records): that line is the last
/// handed out, and `stoppedLine` gives it back with `reader` untouched since, so the caller
/// classifies the damage by reading on from there exactly as a replay on one thread would.
final class LinePrefetcher: @unchecked Sendable {
    // `reader` and `parser` belong to the thread until it has ended, then to the caller;
    // @unchecked because the compiler cannot see that. The rest is `shared`'s.

    /// One line as the thread read it.
    struct ParsedLine {
        /// The file offset of the line's first byte.
        let offset: UInt64
        /// The offset just past its newline: where the next line starts.
        let end: UInt64
        /// What it parsed as; nil for a damaged or unterminated line.
        let kind: LineKind?
        /// Its changes, a range of its batch's `changes`.
        let changes: Range<Int>
    }

    /// Consecutive lines and their changes.
    struct Batch {
        var lines: [ParsedLine] = []
        var changes: [JournalChange] = []
    }

    let reader: LineReader
    private var parser = LineParser()
    private let snapshotParts: UInt64
    /// What the thread and the caller share; each sleeps on it for the other.
    private let shared = Monitor(Shared())

    private struct Shared {
        var ready: [Batch] = []
        /// Batches applied, for the thread to free: their keys and values were allocated there.
        var applied: [Batch] = []
        var finished = false
        var cancelled = false
        var failure: (any Error)?
        var stopped: LineReader.Line?
    }

    private static let batchBytes = 1 << 20
    private static let queuedBatches = 4

    /// Starts reading lines from `reader`'s position, where snapshot part 0 of `snapshotParts`
    /// starts (or the first record, when there are none).
    init(reader: LineReader, snapshotParts: UInt64) {
        self.reader = reader
        self.snapshotParts = snapshotParts
        let thread = Thread { [self] in run() }
        thread.name = "journal-replay-reader"
        thread.start()
    }

    /// The next batch, in file order, waiting for the thread if needed; nil once every line read
    /// has been handed out.
    /// - Throws: what reading the file threw, after every line read before it.
    func next() throws -> Batch? {
        let (batch, failure) = shared.update(when: { !$0.ready.isEmpty || $0.finished }) { shared, _ -> (Batch?, (any Error)?) in
            shared.ready.isEmpty ? (nil, shared.failure) : (shared.ready.removeFirst(), nil)
        }
        if let failure { throw failure }
        return batch
    }

    /// Hands back a batch whose changes have been applied, for the thread to free: that is its
    /// allocator's work, on the core with time to spare (the frees were 4% of a restart's
    /// applying thread), and what it allocated goes back to its own malloc arena.
    func recycle(_ batch: consuming Batch) {
        shared.withLock { [batch] in $0.applied.append(batch) }
    }

    /// The line reading stopped at (the last one handed out), once every batch has been taken;
    /// nil when reading stopped at the end of the file.
    var stoppedLine: LineReader.Line? {
        shared.withLock { shared in
            precondition(shared.finished, "the reader thread still owns the reader")
            return shared.stopped
        }
    }

    /// Stops the thread and waits for it to end; the caller then owns `reader`. Call before the
    /// scan returns, whatever it found: the file must not be read once its caller moves on.
    func finish() {
        shared.update { $0.cancelled = true }
        shared.wait(until: \.finished)
    }

    private func run() {
        var batch = Batch()
        var bytes = 0
        var linesRead: UInt64 = 0
        var failure: (any Error)?
        do {
            while let line = try reader.next() {
                let first = batch.changes.count
                let kind = line.terminated ? parser.parse(line.bytes, into: &batch.changes) : nil
                let expected = linesRead < snapshotParts ? kind == .snapshot(part: linesRead) : kind.map(\.isRecord) ?? false
                batch.lines.append(ParsedLine(offset: line.offset, end: reader.position, kind: kind, changes: first..<batch.changes.count))
                linesRead += 1
                if !expected {
                    shared.withLock { $0.stopped = line }
                    break
                }
                bytes += line.bytes.count
                if bytes >= Self.batchBytes {
                    guard hand(batch) else { return finish(with: nil) }
                    batch = Batch()
                    bytes = 0
                }
            }
        } catch {
            failure = error
        }
        if !batch.lines.isEmpty { _ = hand(batch) }
        finish(with: failure)
    }

    /// Queues `batch`, waiting while the queue is full; false if the caller has cancelled.
    private func hand(_ batch: Batch) -> Bool {
        var freed: [Batch] = []
        defer { freed.removeAll() }  // outside the lock
        return shared.update(when: { $0.ready.count < Self.queuedBatches || $0.cancelled }) { shared, _ in
            swap(&freed, &shared.applied)
            guard !shared.cancelled else { return false }
            shared.ready.append(batch)
            return true
        }
    }

    private func finish(with failure: (any Error)?) {
        shared.update { shared in
            shared.failure = failure
            shared.finished = true
        }
    }
}

extension LineKind {
    fileprivate var isRecord: Bool {
        if case .record = self { return true }
        return false
    }
}

/// A prefetcher's lines one by one, keeping the batch of the last one so that its changes can
/// be applied in place.
struct PrefetchedLines {
    private let prefetcher: LinePrefetcher
    private var batch = LinePrefetcher.Batch()
    private var index = 0

    init(_ prefetcher: LinePrefetcher) {
        self.prefetcher = prefetcher
    }

    /// The next line, or nil after the last one read.
    /// - Throws: what reading the file threw, after every line read before it.
    mutating func next() throws -> LinePrefetcher.ParsedLine? {
        while index == batch.lines.count {
            guard let next = try prefetcher.next() else { return nil }
            let done = batch
            batch = next
            index = 0
            prefetcher.recycle(done)
        }
        index += 1
        return batch.lines[index - 1]
    }

    /// The changes of `line`, the last line `next()` returned.
    func changes(of line: LinePrefetcher.ParsedLine) -> ArraySlice<JournalChange> {
        batch.changes[line.changes]
    }
}
