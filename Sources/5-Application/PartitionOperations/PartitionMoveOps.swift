import Foundation
import JSON
import LearningServices
import LyceumLifecycle
import Majordomo
import Synchronization

/// The partition-move ops of a worker's node service (`move`, `receive`, `adopt`): parses the
/// request, runs it as source or target, and answers in the services' reply contract. One move
/// at a time leaves this node; another gets `unavailable` while the first runs, but the same one
/// sent again (its `move_id`) gets its outcome.
public final class PartitionMoveOps: Sendable {
    private let mover: PartitionMover
    private let receiver: PartitionReceiver
    private let moving = Mutex(false)
    private let ledger: PartitionMoveLedger
    /// Where the target's side runs (`receive` writes and syncs chunks, `adopt` replays a whole
    /// journal), one request at a time, in the order they came: never on the pool's thread.
    private let receiving = DispatchQueue(label: "partition-receive")

    /// The move ops of the node holding `custody`'s partitions, calling other nodes with
    /// `call`; the outcomes of its moves are kept in `outcomes` when given (else in memory only).
    init(custody: any PartitionCustody, call: @escaping PartitionMover.Call, outcomes: PartitionMoveOutcomeFile? = nil) {
        mover = PartitionMover(custody: custody, call: call)
        receiver = PartitionReceiver(custody: custody)
        ledger = PartitionMoveLedger(file: outcomes)
    }

    /// The move ops of a partitioned worker's node, calling other nodes with `call`; the outcomes
    /// of its moves are kept in `outcomes` when given (else in memory only).
    public convenience init(worker: PartitionedWorker, call: @escaping PartitionMover.Call, outcomes: PartitionMoveOutcomeFile? = nil) {
        self.init(custody: worker, call: call, outcomes: outcomes)
    }

    /// The node service's worker pool handler: requests whose `op` is a move op are answered
    /// here, off the pool's thread and replying later, so that the pool's other services (the
    /// catalog, every other partition) never wait behind a move's disk work: a `move` on a
    /// thread of its own, the target's `receive`s and `adopt`s one after the other on another.
    /// Every other request goes to `otherwise`.
    public func handler(otherwise: @escaping WorkerPool.Handler) -> WorkerPool.Handler {
        { body, caller, later in
            guard let first = body.first, case .string(let op) = JSONParser().member("op", in: first),
                  PartitionMoveRequest.ops.contains(op) else { return otherwise(body, caller, later) }
            guard op == "move" else {
                self.receiving.async { later.send([self.answer(body)]) }
                return nil
            }
            guard case .move(let ticket, let id?, _)? = try? PartitionMoveRequest(frames: body) else {
                self.startMove(body) { later.send([$0]) }
                return nil
            }
            switch self.ledger.admit(id, ticket: ticket, reply: later) {
            case .start:
                self.startMove(body) { outcome in
                    for waiting in self.ledger.finish(id, outcome: outcome) { waiting.send([outcome]) }
                }
            case .wait:
                break
            case .finished(let outcome):
                return [outcome]
            case .otherMove(let other):
                return [ServiceError(.badRequest, "move_id \(id) names the move of \(other.name) to \(other.to), not this one", field: "$.move_id").replyFrame]
            }
            return nil
        }
    }

    /// Runs the `move` in `frames` on a thread of its own and hands its reply frame to `done`.
    private func startMove(_ frames: [[UInt8]], then done: @escaping @Sendable ([UInt8]) -> Void) {
        Thread.detachNewThread {
            Thread.nameCurrent("partition-move")
            done(self.answer(frames))
        }
    }

    /// The reply frame to a request's frames. A `move` returns only when it has finished or
    /// failed (seconds for a large journal): call it off the thread that serves other requests.
    func answer(_ frames: [[UInt8]]) -> [UInt8] {
        do throws(ServiceError) {
            let request = try PartitionMoveRequest(frames: frames)
            guard case .move(let ticket, _, let leadership) = request else { return try receiver.handle(request).successReplyFrame }
            guard moving.withLock({ busy in defer { busy = true }; return !busy }) else {
                throw ServiceError(.unavailable, "another partition move is running on this node; try again when it ends")
            }
            defer { moving.withLock { $0 = false } }
            do {
                if leadership { return try mover.handOff(service: ticket.service, partition: ticket.partition, to: ticket.to).successReplyFrame }
                return try mover.move(service: ticket.service, partition: ticket.partition, to: ticket.to).successReplyFrame
            } catch {
                throw error.serviceError
            }
        } catch {
            return error.replyFrame
        }
    }
}
