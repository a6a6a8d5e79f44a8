/// What reading a journal file from its start found.
struct JournalScan {
    /// The sequence number the file's snapshot reflects (0 for a never-compacted journal).
    var base: UInt64 = 0
    /// Snapshot parts read.
    var snapshotParts: UInt64 = 0
    /// Bytes taken by the header and the snapshot: the live data at the last compaction.
    var snapshotBytes: UInt64 = 0
    /// Valid records read after the snapshot.
    var records: UInt64 = 0
    /// The sequence number of the last valid record (or `base` when there is none).
    var lastSequence: UInt64 = 0
    /// The offset just past the last valid line: where the next record goes.
    var validEnd: UInt64 = 0
    /// The file's size when the scan started.
    var fileSize: UInt64 = 0
    /// The first problem, if any; nothing after it was delivered.
    var problem: JournalError?
}

/// Reads a journal file from its start, delivering committed changes in order and classifying
/// the first problem by the recovery rules of `protocol/journal.md`.
enum JournalScanner {
    static func scan<State: JournalState>(
        fd: Int32, path: String, into state: inout State, progress: ((JournalProgress) -> Void)?
    ) throws -> JournalScan {
        let scan = try scanLines(fd: fd, path: path, into: &state, progress: progress)
        progress?(JournalProgress(phase: .replay, bytesDone: scan.validEnd, bytesTotal: scan.fileSize))
        return scan
    }

    private static func scanLines<State: JournalState>(
        fd: Int32, path: String, into state: inout State, progress: ((JournalProgress) -> Void)?
    ) throws -> JournalScan {
        var scan = JournalScan()
        scan.fileSize = try SystemCall.size(fd, path: path)
        let reader = LineReader(fd: fd, path: path, limit: scan.fileSize)
        var parser = LineParser()
        var headerChanges: [JournalChange] = []  // a header has none
        let progressStep: UInt64 = 16 << 20
        var nextReport = progressStep
        progress?(JournalProgress(phase: .replay, bytesDone: 0, bytesTotal: scan.fileSize))

        guard let first = try reader.next(), first.terminated,
              case let .header(version, base, parts)? = parser.parse(first.bytes, into: &headerChanges)
        else {
            scan.problem = JournalError(.invalidHeader, "the first line is not a valid lyceum-journal header", path: path, offset: 0)
            return scan
        }
        guard version == RecordFormat.version else {
            scan.problem = JournalError(.invalidHeader, "format version \(version) is not supported (this build reads version \(RecordFormat.version))", path: path, offset: 0)
            return scan
        }
        scan.base = base
        scan.lastSequence = base
        scan.validEnd = reader.position

        // The lines after the header are read and parsed on another thread; this one applies them.
        let prefetcher = LinePrefetcher(reader: reader, snapshotParts: parts)
        defer { prefetcher.finish() }
        var lines = PrefetchedLines(prefetcher)

        while scan.snapshotParts < parts {
            guard let line = try lines.next(), case .snapshot(scan.snapshotParts)? = line.kind else {
                scan.problem = JournalError(.corruptSnapshot, "snapshot part \(scan.snapshotParts) of \(parts) is missing or damaged", path: path, offset: scan.validEnd, sequence: base)
                return scan
            }
            if let problem = apply(lines.changes(of: line), to: &state, path: path, offset: scan.validEnd, sequence: base) {
                scan.problem = problem
                return scan
            }
            scan.snapshotParts += 1
            scan.validEnd = line.end
        }
        scan.snapshotBytes = scan.validEnd

        // Once the first few MiB are read, the state hears how many changes the rest will bring.
        var changesApplied = 0
        var capacityEstimated = scan.fileSize < 8 << 20
        while let line = try lines.next() {
            let expected = scan.lastSequence + 1
            guard case let .record(sequence)? = line.kind else {
                prefetcher.finish()
                let damaged = prefetcher.stoppedLine!
                let dropped = scan.fileSize - line.offset
                if try validLineFollows(damaged, reader: prefetcher.reader, parser: &parser) {
                    scan.problem = JournalError(.midJournalCorruption, "the record at this offset is damaged but valid records follow it; refusing to skip it (inspect the file, then `lyceum journal repair` drops everything from here)", path: path, offset: line.offset, sequence: expected)
                } else {
                    scan.problem = JournalError(.tornTail, "the last \(dropped) bytes are an incomplete or damaged record with nothing valid after it", path: path, offset: line.offset, sequence: expected)
                }
                return scan
            }
            guard sequence == expected else {
                scan.problem = JournalError(.sequenceGap, "a valid record has sequence number \(sequence) where \(expected) was expected (a \(sequence < expected ? "duplicate" : "gap"))", path: path, offset: line.offset, sequence: expected)
                return scan
            }
            let changes = lines.changes(of: line)
            if let problem = apply(changes, to: &state, path: path, offset: line.offset, sequence: sequence) {
                scan.problem = problem
                return scan
            }
            changesApplied += changes.count
            scan.records += 1
            if !capacityEstimated, line.offset - scan.snapshotBytes >= 2 << 20 {
                capacityEstimated = true
                let perByte = Double(changesApplied) / Double(line.offset - scan.snapshotBytes)
                state.reserveCapacity(forChanges: Int(perByte * Double(scan.fileSize - scan.snapshotBytes)))
            }
            scan.lastSequence = sequence
            scan.validEnd = line.end
            if scan.validEnd >= nextReport {
                progress?(JournalProgress(phase: .replay, bytesDone: scan.validEnd, bytesTotal: scan.fileSize))
                nextReport = scan.validEnd + progressStep
            }
        }
        return scan
    }

    /// Applies one valid line's changes; a change the state cannot decode becomes the scan's
    /// problem, exactly like damage: replay stops there, and neither it nor anything after it is
    /// skipped over. (The line's earlier changes may already be in the state; `open` discards
    /// that state, `check` reports the problem.)
    private static func apply<State: JournalState>(
        _ changes: ArraySlice<JournalChange>, to state: inout State, path: String, offset: UInt64, sequence: UInt64
    ) -> JournalError? {
        do {
            for change in changes { try state.apply(change) }
            return nil
        } catch {
            let advice = switch error.error {
            case .newerFormat: "run the Lyceum that wrote it (or a newer one); this build must not rewrite it"
            case .malformed: "nothing was skipped: run a Lyceum that reads this value, or correct the record by hand (and its crc) from a backup"
            }
            return JournalError(.undecodableValue, "\(error); \(advice)", path: path, offset: offset, sequence: sequence)
        }
    }

    /// Whether any complete, checksummed line starts after the start of `damaged`, including inside
    /// it: a lost newline merges a damaged record with the valid one after it.
    private static func validLineFollows(_ damaged: LineReader.Line, reader: LineReader, parser: inout LineParser) throws -> Bool {
        var scratch: [JournalChange] = []
        if damaged.terminated, containsValidLine(damaged.bytes, from: 1, parser: &parser, scratch: &scratch) { return true }
        while let line = try reader.next() {
            if line.terminated, containsValidLine(line.bytes, from: 0, parser: &parser, scratch: &scratch) { return true }
        }
        return false
    }

    private static func containsValidLine(_ bytes: UnsafeRawBufferPointer, from start: Int, parser: inout LineParser, scratch: inout [JournalChange]) -> Bool {
        var index = start
        while index < bytes.count {
            guard let brace = memchr(bytes.baseAddress! + index, 0x7B, bytes.count - index) else { return false }
            index = bytes.baseAddress!.distance(to: UnsafeRawPointer(brace))
            var cursor = LineCursor(bytes, from: index)
            if cursor.consume(#"{"seq":"#) || cursor.consume(#"{"part":"#) {
                let candidate = UnsafeRawBufferPointer(rebasing: bytes[index...])
                if parser.parse(candidate, into: &scratch) != nil { return true }
                scratch.removeAll(keepingCapacity: true)
            }
            index += 1
        }
        return false
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
