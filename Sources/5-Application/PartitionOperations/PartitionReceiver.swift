import Journal
import JSON
import LearningServices

/// The target's side of a partition move: `receive` writes the copy beside the partition's
/// directory (`p<P>.incoming`, then `p<P>.received`), `adopt` makes it the partition's journal
/// directory and serves it. It keeps nothing in memory, so a restarted target carries on from
/// what its disk holds.
struct PartitionReceiver: Sendable {
    let custody: any PartitionCustody

    /// Answers one target-side request, or the error to reply with.
    func handle(_ request: PartitionMoveRequest) throws(ServiceError) -> JSONValue {
        switch request {
        case .move:
            preconditionFailure("move goes to the source's PartitionMover")
        case .begin(let ticket):
            try perform(ticket) { copy in
                try custody.admit(service: ticket.service, partition: ticket.partition)
                try copy.begin()
            }
        case .chunk(let ticket, let chunk):
            try perform(ticket) { try $0.write(chunk) }
        case .finish(let ticket, let files):
            try perform(ticket) { try $0.finish(expecting: files) }
        case .abort(let ticket):
            try perform(ticket) { try $0.discard() }
        case .adopt(let ticket, let files):
            try perform(ticket) { copy in
                try copy.adopt(expecting: files)
                try custody.serve(service: ticket.service, partition: ticket.partition)
            }
        }
        return ["node": .string(custody.node)]
    }

    private func perform(_ ticket: PartitionMoveTicket, _ body: (JournalImport) throws -> Void) throws(ServiceError) {
        guard ticket.to == custody.node else {
            throw ServiceError(.badRequest, "this is node \(custody.node), not \(ticket.to)", field: "$.to")
        }
        do {
            try body(JournalImport(destination: custody.directory(service: ticket.service, partition: ticket.partition)))
        } catch {
            throw PartitionMoveFailure.serviceError(error, context: "\(ticket.name) on \(custody.node)")
        }
    }
}
