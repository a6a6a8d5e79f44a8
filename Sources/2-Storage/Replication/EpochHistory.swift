import DurableFiles
import Foundation
import Journal

/// A replica's durable memory of epochs, beside its journal of the partition
/// (`epochs.jsonl`): which epoch wrote which records, and the highest epoch it has adopted (it
/// refuses appends of older ones). One checksummed JSON line per fact, fdatasync'ed before the
/// fact is acted on:
///
/// ```
/// {"epoch":7,"start_seq":120,"crc":"1a2b3c4d"}   records from 120 on were written in epoch 7
/// {"adopted":9,"crc":"…"}                         appends of epochs below 9 are refused
/// ```
///
/// Kafka's leader-epoch checkpoint plays the same role. Owned by one replica (one thread at a time).
///
/// Its files are made durable through `DurableFile`, under its policy: a failed sync is final.
/// The history cuts off the line whose sync failed, refuses every later fact (so the replica
/// takes no append and acknowledges nothing more), and reports the failure to
/// `StorageFailure`, which stops the process (protocol/replication.md, *A failed sync*).
public final class EpochHistory {
    /// One epoch's first record.
    public struct Start: Sendable, Equatable {
        /// The epoch.
        public let epoch: Int64
        /// The sequence number of its first record.
        public let startSequence: UInt64

        /// Epoch `epoch` starting at `startSequence`.
        public init(epoch: Int64, startSequence: UInt64) {
            self.epoch = epoch
            self.startSequence = startSequence
        }
    }

    /// The file's path.
    public let path: String
    /// Every epoch start, in increasing epoch order.
    public private(set) var starts: [Start] = []
    /// The highest epoch adopted (0: none).
    public private(set) var adopted: Int64 = 0
    private let fd: Int32
    /// The failed sync that ended this history's writes, if one did.
    private var failure: ReplicationError?

    /// Opens (creating if needed) the history at `path` and reads it.
    /// - Throws: `history` naming the line when a line is damaged or out of order.
    public init(path: String) throws(ReplicationError) {
        self.path = path
        try Self.finishInterruptedInstall(historyPath: path)
        let opened = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard opened >= 0 else { throw ReplicationError(.history, "cannot open \(path): \(String(cString: strerror(errno)))") }
        fd = opened
        // The file's entry is durable only once its directory is synced: without this, a power
        // loss after the first facts were synced could take the whole new file, adoption included
        // (found by issue 36's power-loss filesystem). Once per open: it may have been created by
        // a run that stopped before syncing. (Every property is set: a throw closes `fd` in deinit.)
        try Self.durably { () throws(DurableFileError) in try DurableFile.syncDirectory((path as NSString).deletingLastPathComponent) }
        // A history that cannot be read must not pass for an empty one: the replica would
        // forget the epochs it adopted and take appends from a deposed leader.
        var contents: [UInt8]
        do {
            contents = try Array(Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw ReplicationError(.history, "cannot read \(path): \(error.localizedDescription)")
        }
        // A last line without its newline is a write a crash cut short: its fdatasync never
        // returned, so nothing acted on it, and it is cut off so that later lines follow a whole one.
        // (Every property is set by now, so a throw below closes `fd` in deinit.)
        if let last = contents.last, last != 0x0A {
            let kept = (contents.lastIndex(of: 0x0A) ?? -1) + 1
            guard ftruncate(opened, off_t(kept)) == 0 else {
                throw ReplicationError(.history, "cannot cut the unfinished last line of \(path) at byte \(kept): \(String(cString: strerror(errno)))")
            }
            try Self.durably { () throws(DurableFileError) in try DurableFile.syncData(opened, path: path) }
            contents.removeSubrange(kept...)
        }
        var lineNumber = 0
        for line in contents.split(separator: 0x0A, omittingEmptySubsequences: true) {
            lineNumber += 1
            guard let fact = Self.decode(Array(line)) else {
                throw ReplicationError(.history, "\(path) line \(lineNumber) is damaged (checksum or shape)")
            }
            switch fact {
            case .start(let start):
                guard start.epoch > (starts.last?.epoch ?? 0) else { throw ReplicationError(.history, "\(path) line \(lineNumber): epoch \(start.epoch) is not above the one before") }
                starts.append(start)
                adopted = max(adopted, start.epoch)
            case .adopted(let epoch):
                adopted = max(adopted, epoch)
            }
        }
    }

    deinit { close(fd) }

    /// The epoch that wrote record `sequence` (0 for records before any known epoch).
    public func epoch(of sequence: UInt64) -> Int64 {
        starts.last { $0.startSequence <= sequence }?.epoch ?? 0
    }

    /// The last sequence written in `epoch` in a log that ends at `lastSequence`: what a leader
    /// keeps of a replica whose log ends in `epoch`.
    public func end(of epoch: Int64, lastSequence: UInt64) -> UInt64 {
        guard let next = starts.first(where: { $0.epoch > epoch }) else { return lastSequence }
        return min(lastSequence, next.startSequence - 1)
    }

    /// Records that appends of epochs below `epoch` are refused from now on (durably).
    public func adopt(_ epoch: Int64) throws(ReplicationError) {
        guard epoch > adopted else { return }
        try write(Self.encode(.adopted(epoch)))
        adopted = epoch
    }

    /// Records that epoch `start.epoch` wrote the records from `start.startSequence` on
    /// (durably), adopting it. A start already known changes nothing; one for an epoch below
    /// the last known start is refused.
    public func record(_ start: Start) throws(ReplicationError) {
        if starts.contains(start) { return }
        guard start.epoch > (starts.last?.epoch ?? 0) else {
            throw ReplicationError(.history, "epoch \(start.epoch) is not above the last known (\(starts.last?.epoch ?? 0))")
        }
        try write(Self.encode(.start(start)))
        starts.append(start)
        adopted = max(adopted, start.epoch)
    }

    /// Forgets the epochs that started after `sequence` + 1: their records were cut off.
    /// Adoption is kept (a replica never un-adopts an epoch).
    public func forget(after sequence: UInt64) throws(ReplicationError) {
        try keep(starts.filter { $0.startSequence <= sequence + 1 })
    }

    /// Forgets the epochs whose first record is not in a log that ends at `lastSequence`: a
    /// leader that recorded its epoch and wrote nothing, or records lost with the page cache
    /// under `interval` or `none` while this history, synced on its own, kept their starts.
    /// Such a start would otherwise claim the records that come next for its epoch, and refuse
    /// the starts of the older epochs that really wrote them (protocol/replication.md). Adoption
    /// is kept.
    public func forgetUnwritten(lastSequence: UInt64) throws(ReplicationError) {
        try keep(starts.filter { $0.startSequence <= lastSequence })
    }

    /// Rewrites the history with `kept`, a prefix of its starts, when it is shorter.
    private func keep(_ kept: [Start]) throws(ReplicationError) {
        guard kept.count < starts.count else { return }
        // Rewrite through a temporary file and a rename, so that a crash leaves one whole history.
        try Self.writeFile(path, starts: kept, adopted: adopted)
        try reopen(starts: kept, adopted: adopted)
    }

    /// The directory beside the history where a rebuild stages the journal and history it
    /// installs (``stage(starts:)``, ``installStaged(starts:)``).
    public var stagingDirectory: String { (path as NSString).deletingLastPathComponent + "/rebuild" }

    /// Writes, durably, the history a rebuild installs with its journal: `starts` (the epochs of
    /// the records the new journal holds), and this history's adoption kept. Install it with
    /// ``installStaged(starts:)`` once the new journal is in place.
    public func stage(starts: [Start]) throws(ReplicationError) {
        try Self.writeFile(stagingDirectory + "/epochs.jsonl", starts: starts, adopted: adopted)
    }

    /// Puts the history ``stage(starts:)`` wrote in place of this one, durably: the second step
    /// of a rebuild's install, after the journal's rename (its commit point). A crash between
    /// the two is finished when the history is next opened.
    public func installStaged(starts: [Start]) throws(ReplicationError) {
        let staged = stagingDirectory + "/epochs.jsonl"
        try Self.durably { () throws(DurableFileError) in try DurableFile.rename(staged, to: path) }
        try reopen(starts: starts, adopted: adopted)
    }

    /// Finishes or undoes a rebuild's install that a crash interrupted, before the history is
    /// read: the staged journal still there means the journal's rename (the commit point) never
    /// happened, so the staging is dropped; a staged history alone means it did, so the history
    /// that goes with the new journal is put in place.
    private static func finishInterruptedInstall(historyPath path: String) throws(ReplicationError) {
        let staging = (path as NSString).deletingLastPathComponent + "/rebuild"
        guard access(staging, F_OK) == 0 else { return }
        if access(staging + "/journal.jsonl", F_OK) != 0, access(staging + "/epochs.jsonl", F_OK) == 0 {
            try durably { () throws(DurableFileError) in try DurableFile.rename(staging + "/epochs.jsonl", to: path) }
        }
        do { try FileManager.default.removeItem(atPath: staging) } catch {
            throw ReplicationError(.history, "cannot remove \(staging): \(error.localizedDescription)")
        }
    }

    /// Puts a whole history at `file`, durably: a temporary file beside it, synced, renamed
    /// into place, the directory synced (`DurableFile.replace`), so a crash leaves one whole history.
    private static func writeFile(_ file: String, starts: [Start], adopted: Int64) throws(ReplicationError) {
        var bytes: [UInt8] = []
        for start in starts { bytes += encode(.start(start)) }
        if adopted > 0 { bytes += encode(.adopted(adopted)) }
        try durably { () throws(DurableFileError) in try DurableFile.replace(file, with: bytes) }
    }

    /// Runs a durable-file operation of the history: a failure is a `history` error, and a
    /// failed sync is also reported to `StorageFailure` (the process stops: no second sync
    /// of these pages could be trusted).
    private static func durably(_ operation: () throws(DurableFileError) -> Void) throws(ReplicationError) {
        do { try operation() } catch {
            if error.isSyncFailure { StorageFailure.stop(error, owner: "epoch history", outcome: "the replica takes no append and acknowledges nothing more") }
            throw ReplicationError(.history, "\(error)")
        }
    }

    /// Points the descriptor at the file now at `path` (replaced by a rename) and takes its facts.
    private func reopen(starts: [Start], adopted: Int64) throws(ReplicationError) {
        let reopened = open(path, O_RDWR | O_APPEND | O_CLOEXEC)
        guard reopened >= 0 else { throw ReplicationError(.history, "cannot reopen \(path): \(String(cString: strerror(errno)))") }
        dup2(reopened, fd)
        close(reopened)
        self.starts = starts
        self.adopted = max(self.adopted, adopted, starts.last?.epoch ?? 0)
    }

    /// Appends one fact and syncs it. A write the disk refuses (a full disk) is cut off and
    /// thrown, nothing changed; a failed sync cuts the line off too, and ends this history's
    /// writes (``durably(_:)``): the fact is neither acted on nor written again.
    private func write(_ line: [UInt8]) throws(ReplicationError) {
        if let failure { throw failure }
        let end = lseek(fd, 0, SEEK_END)
        let written = line.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        guard written == line.count else {
            let reason = String(cString: strerror(written < 0 ? errno : ENOSPC))
            if end >= 0 { _ = ftruncate(fd, end) }  // best effort: an unfinished last line is also cut when the history is next opened
            throw ReplicationError(.history, "cannot write \(path): \(reason)")
        }
        do {
            try Self.durably { () throws(DurableFileError) in try DurableFile.syncData(fd, path: path) }
        } catch {
            if end >= 0 { _ = ftruncate(fd, end) }  // the pages the failed sync may have dropped go with the line
            failure = error
            throw error
        }
    }

    private enum Fact {
        case start(Start)
        case adopted(Int64)
    }

    private static func encode(_ fact: Fact) -> [UInt8] {
        var line: [UInt8]
        switch fact {
        case .start(let start): line = Array(#"{"epoch":\#(start.epoch),"start_seq":\#(start.startSequence)"#.utf8)
        case .adopted(let epoch): line = Array(#"{"adopted":\#(epoch)"#.utf8)
        }
        line += Array(#","crc":"\#(hex(CRC32C.checksum(line)))"}"#.utf8) + [0x0A]
        return line
    }

    private static func decode(_ line: [UInt8]) -> Fact? {
        let suffix = #","crc":"00000000"}"#.utf8.count
        guard line.count > suffix else { return nil }
        let body = Array(line[..<(line.count - suffix)])
        guard Array(line[(line.count - suffix)...]) == Array(#","crc":"\#(hex(CRC32C.checksum(body)))"}"#.utf8) else { return nil }
        let text = String(decoding: body, as: UTF8.self)
        let numbers = text.split { !$0.isNumber }.compactMap { Int64($0) }
        if text.hasPrefix(#"{"epoch":"#), text.contains(#","start_seq":"#), numbers.count == 2, numbers[0] > 0 {
            return .start(Start(epoch: numbers[0], startSequence: UInt64(numbers[1])))
        }
        if text.hasPrefix(#"{"adopted":"#), numbers.count == 1 { return .adopted(numbers[0]) }
        return nil
    }

    private static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}
