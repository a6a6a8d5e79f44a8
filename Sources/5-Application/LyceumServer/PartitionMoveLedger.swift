import Majordomo
import Synchronization

/// The `move`s this node runs or ran, by the `move_id` the command gave each. A `move` sent
/// again with the same id (the command, after a timeout, through another broker) is the same
/// move: while it runs the request waits for its outcome, afterwards it gets that outcome at
/// once; it never starts a second move, nor gets `unavailable` for the one running. Kept in
/// memory for the last ``remembered`` moves: a node restarted since treats the id as new, and
/// the move then finishes or reports where the partition is (protocol/partitions.md).
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

    private let state = Mutex<(entries: [String: Entry], finishedOrder: [String])>(([:], []))

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

    /// Records the outcome of the move `id` and returns the requests waiting for it.
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
            return waiting
        }
    }
}
