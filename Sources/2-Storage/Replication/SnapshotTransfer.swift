import Journal
import LyceumLogging

/// The sending end of a rebuild (protocol/replication.md, *Rebuilding a replica*): one image of
/// the journal (``JournalImage``: its snapshot and the records after it, as they stand when the
/// rebuild starts), served in order, piece by piece, as the receiver asks for them.
final class SnapshotSource {
    private let image: JournalImage
    /// Where the image's log ends.
    let end: LogPosition
    /// The epoch starts of the records it holds (the last 64: enough to know the epoch of every
    /// record after the snapshot a replica can still be asked to cut).
    private let starts: [EpochHistory.Start]
    private var served: UInt64 = 0
    private var crc: UInt32 = 0

    /// The image of `journal` now, with the epochs of `history` it holds.
    init(journal: Journal, history: EpochHistory) {
        let image = JournalImage(of: journal)
        let last = image.lastSequence
        self.image = image
        end = LogPosition(epoch: history.epoch(of: last), sequence: last)
        starts = Array(history.starts.filter { $0.startSequence <= last }.suffix(64))
    }

    /// The image's length in bytes.
    var size: UInt64 { image.size }

    /// The `snapshot` message with the bytes at `offset`, at most `maxBytes`; `nil` unless
    /// `offset` is where the previous piece ended (the receiver then starts over from 0).
    func piece(partition: String, epoch: Int64, at offset: UInt64, maxBytes: Int) throws -> ReplicationMessage? {
        guard offset == served, offset < image.size else { return nil }
        let bytes = try image.read(at: offset, maxBytes: maxBytes)
        crc = CRC32C.checksum(bytes, continuing: crc)
        served += UInt64(bytes.count)
        return .snapshot(
            partition: partition, epoch: epoch, offset: offset, size: image.size, end: end, epochs: starts,
            crc: served == image.size ? crc : nil, bytes: bytes)
    }
}

/// The steps of a rebuild's install, for tests that stop it in the middle as a crash would.
public enum SnapshotInstallStep: Sendable {
    /// The image and its history are staged and durable; nothing is installed yet.
    case staged
    /// The journal is installed (the commit point); the history is not yet.
    case journalInstalled
}

/// The receiving end of a rebuild: pieces written in order into the staging directory beside
/// the journal (``StagedJournal``), checked whole, then installed: the journal first (one
/// rename: the commit point), its epoch history second (a crash between the two is finished by
/// ``EpochHistory``'s next opening). Nothing is acknowledged from the image before that.
final class SnapshotReceiver {
    private var staged: StagedJournal?
    private var size: UInt64 = 0
    private var end = LogPosition(epoch: 0, sequence: 0)
    private var starts: [EpochHistory.Start] = []
    /// Stops an install after a step, as a crash would (tests only).
    var stepHook: ((SnapshotInstallStep) throws -> Void)?

    /// Where the image being received ends.
    var imageEnd: LogPosition { end }

    /// Writes one piece into `directory`'s staging (offset 0 starts a new image).
    /// - Returns: the offset to ask for next, or `nil` once the image is complete and its whole
    ///   checksum matches.
    /// - Throws: `gap` for a piece that does not follow or belongs to another image, `bad_record`
    ///   for a complete image whose checksum differs, `storage` when the disk refuses; the
    ///   staging is dropped in each case.
    func accept(
        offset: UInt64, size: UInt64, end: LogPosition, epochs: [EpochHistory.Start], crc: UInt32?, bytes: [UInt8], directory: String
    ) throws(ReplicationError) -> UInt64? {
        do {
            if offset == 0 {
                discard()
                staged = try StagedJournal(directory: directory)
                (self.size, self.end, starts) = (size, end, epochs)
            }
            guard let staged, staged.written == offset, self.size == size, self.end == end, starts == epochs else {
                throw ReplicationError(.gap, "an image piece at \(offset) of \(size) bytes does not follow the \(staged?.written ?? 0) received of \(self.size)")
            }
            try staged.write(bytes)
            guard staged.written == size else { return staged.written }
            guard let crc, staged.crc32c == crc else {
                throw ReplicationError(.badRecord, "the received image's CRC-32C \(staged.crc32c) is not the source's \(crc.map(String.init) ?? "none")")
            }
            try staged.sync()
            return nil
        } catch let error as ReplicationError {
            discard()
            throw error
        } catch {
            discard()
            throw ReplicationError(.storage, "staging the image: \(error)")
        }
    }

    /// Installs the complete image into `store`, and its epochs into `history`.
    /// - Throws: `bad_record` when the image does not replay to its end (nothing installed),
    ///   `storage` or `history` when the disk refuses.
    func install(into store: any ReplicaStore, history: EpochHistory) throws(ReplicationError) {
        guard let staged else { throw ReplicationError(.gap, "no complete image to install") }
        do {
            try history.stage(starts: starts)
            try stepHook?(.staged)
            do { try store.install(staged: staged.directory, lastSequence: end.sequence) } catch {
                discard()
                throw ReplicationError(.badRecord, "the image does not install: \(error)")
            }
            try stepHook?(.journalInstalled)
            try history.installStaged(starts: starts)
            discard()
        } catch let error as ReplicationError {
            throw error
        } catch {
            throw ReplicationError(.storage, "installing the image: \(error)")
        }
    }

    /// Drops the image being received, if any.
    func discard() {
        guard let staged else { return }
        self.staged = nil
        do { try staged.discard() } catch {
            // Nothing installed depends on it: a staging left behind is thrown away at the next start.
            Logger(component: "replication").warning(
                "could not remove a rebuild's staging", ["directory": staged.directory, "error": "\(error)"])
        }
    }
}
