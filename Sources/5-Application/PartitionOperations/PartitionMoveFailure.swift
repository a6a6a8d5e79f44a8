import Journal
import LearningServices

/// A partition move that stopped: the step it stopped at, why, and who serves the partition now,
/// so that the operator knows whether to re-run it (see `protocol/partitions.md`).
public struct PartitionMoveFailure: Error, Sendable, CustomStringConvertible {
    /// The steps of a move, in order.
    enum Step: String {
        case begin, release, copy, rename, adopt
    }

    let ticket: PartitionMoveTicket
    let step: Step
    let cause: any Error

    /// `unavailable` before the rename (the source serves the partition still, or again; retry any time),
    /// `conflict` after it (the source has given it up; re-running the move finishes it).
    var serviceError: ServiceError {
        let where_ = "moving \(ticket.name) from \(ticket.from) to \(ticket.to) stopped at step \(step.rawValue): \(Self.text(cause))"
        switch step {
        case .begin:
            return ServiceError(.unavailable, where_ + "; \(ticket.from) kept serving \(ticket.name) and the target kept nothing")
        case .release, .copy, .rename:
            return ServiceError(.unavailable, where_ + "; \(ticket.from) serves \(ticket.name) again and the target kept nothing")
        case .adopt:
            return ServiceError(.conflict, where_ + "; \(ticket.from) has given \(ticket.name) up: re-run the same move to finish it")
        }
    }

    public var description: String { serviceError.message }

    /// A journal or other failure as the error a node service replies with.
    static func serviceError(_ error: any Error, context: String) -> ServiceError {
        if let error = error as? ServiceError { return error }
        guard let journal = error as? JournalError else { return ServiceError(.internal, "\(context): \(error)") }
        let code: ServiceError.Code = switch journal.code {
        case .transferRejected: .badRequest
        case .alreadyExists, .locked: .conflict
        default: .unavailable
        }
        return ServiceError(code, "\(context): \(journal)")
    }

    private static func text(_ error: any Error) -> String {
        (error as? ServiceError).map { "\($0.code.rawValue): \($0.message)" } ?? "\(error)"
    }
}
