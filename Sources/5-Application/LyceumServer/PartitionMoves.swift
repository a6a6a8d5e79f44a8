import JSON
import LearningServices
import Synchronization

/// The partition-move ops of a worker's node service (`move`, `receive`, `adopt`): parses the
/// request, runs it as source or target, and answers in the services' reply contract. One move
/// at a time leaves this node; a second gets `unavailable` while the first runs.
final class PartitionMoves: Sendable {
    private let mover: PartitionMover
    private let receiver: PartitionReceiver
    private let moving = Mutex(false)

    init(custody: any PartitionCustody, call: @escaping PartitionMover.Call) {
        mover = PartitionMover(custody: custody, call: call)
        receiver = PartitionReceiver(custody: custody)
    }

    /// Whether `op` is one of the ops answered here.
    static func answers(op: String) -> Bool { PartitionMoveRequest.ops.contains(op) }

    /// The reply frame to a request's frames. A `move` returns only when it has finished or
    /// failed (seconds for a large journal): call it off the thread that serves other requests.
    func answer(_ frames: [[UInt8]]) -> [UInt8] {
        do throws(ServiceError) {
            let request = try PartitionMoveRequest(frames: frames)
            guard case .move(let ticket) = request else { return try receiver.handle(request).successReplyFrame }
            guard moving.withLock({ busy in defer { busy = true }; return !busy }) else {
                throw ServiceError(.unavailable, "another partition move is running on this node; try again when it ends")
            }
            defer { moving.withLock { $0 = false } }
            do {
                return try mover.move(service: ticket.service, partition: ticket.partition, to: ticket.to).successReplyFrame
            } catch {
                throw error.serviceError
            }
        } catch {
            return error.replyFrame
        }
    }
}
