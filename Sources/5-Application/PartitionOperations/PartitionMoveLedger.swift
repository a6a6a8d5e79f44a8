import LyceumLogging
import Majordomo
import Synchronization

/// The `move`s this node runs or ran, by the `move_id` the command gave each. A `move` sent
/// again with the same id (the command, after a timeout, through another broker) is the same
/// move: while it runs the request waits for its outcome, afterwards it gets that outcome at
/// once; it never starts a second move, nor gets `unavailable` for the one running. The last
/// ``remembered`` outcomes are kept, and with a file also across restarts; a move still running
/// when the node stopped has no outcome, so a resend is a new move, which finishes it or
/// reports where the partition is (protocol/partitions.md).
final class PartitionMoveLedger: Sendable {
    /// What to do with a `move` request.
    enum Admission: Equatable {
        /// The first request with this id: run the move, then ``finish(_:outcome:)``.
        case start
        /// The move runs: its outcome will be sent to this request too.
        case wait
        /// The move is over: reply with its outcome.
        case finished([UInt8])
        /// The id names a move of another partition or target: refuse the request.
        case otherMove(PartitionMoveTicket)
    }

    /// How many moves' outcomes are kept.
    static let remembered = 256

    private struct Entry {
        let ticket: PartitionMoveTicket
        var waiting: [DeferredReply]
        var outcome: [UInt8]?
    }

    private let state: Mutex<(entries: [String: Entry], finishedOrder: [String])>
    private let file: PartitionMoveOutcomeFile?
    private let logger = Logger(component: "partmove")

    /// A ledger starting with the outcomes in `file` (none when `nil`, or when the file cannot
    /// be read: logged, and the next outcome replaces it), and keeping them there.
    init(file: PartitionMoveOutcomeFile? = nil) {
        self.file = file
        var restored: [PartitionMoveOutcomeFile.Outcome] = []
        if let file {
            do { restored = try file.read() } catch {
                logger.error("partition move outcomes not restored; a resent move starts anew", ["error": error.description])
            }
        }
        let kept = restored.suffix(Self.remembered)
        state = Mutex((
            Dictionary(kept.map { ($0.id, Entry(ticket: $0.ticket, waiting: [], outcome: $0.reply)) }, uniquingKeysWith: { _, last in last }),
            kept.map(\.id)))
    }

    /// Admits a `move` request of `ticket` with `id`, whose reply goes to `reply`.
    func admit(_ id: String, ticket: PartitionMoveTicket, reply: DeferredReply) -> Admission {
        state.withLock { state in
            guard var entry = state.entries[id] else {
                state.entries[id] = Entry(ticket: ticket, waiting: [reply], outcome: nil)
                return .start
            }
            guard entry.ticket == ticket else { return .otherMove(entry.ticket) }
            if let outcome = entry.outcome { return .finished(outcome) }
            entry.waiting.append(reply)
            state.entries[id] = entry
            return .wait
        }
    }

    /// Records the outcome of the move `id` (in the file too, when there is one) and returns
    /// the requests waiting for it.
    func finish(_ id: String, outcome: [UInt8]) -> [DeferredReply] {
        state.withLock { state in
            guard var entry = state.entries[id] else { return [] }
            let waiting = entry.waiting
            entry.waiting = []
            entry.outcome = outcome
            state.entries[id] = entry
            state.finishedOrder.append(id)
            if state.finishedOrder.count > Self.remembered {
                state.entries[state.finishedOrder.removeFirst()] = nil
            }
            keep(state.finishedOrder.compactMap { id in state.entries[id].map { (id, $0) } }, finished: id)
            return waiting
        }
    }

    /// Writes the outcomes of `finished` moves, oldest first, to the file when there is one;
    /// a failure is logged (the outcome is still answered, and kept in memory).
    private func keep(_ finished: [(id: String, entry: Entry)], finished id: String) {
        guard let file else { return }
        let outcomes = finished.compactMap { move in
            move.entry.outcome.map { PartitionMoveOutcomeFile.Outcome(id: move.id, ticket: move.entry.ticket, reply: $0) }
        }
        do { try file.write(outcomes) } catch {
            logger.error("partition move outcome not kept on disk; a resend after a restart starts anew", ["move_id": id, "error": error.description])
        }
    }
}
