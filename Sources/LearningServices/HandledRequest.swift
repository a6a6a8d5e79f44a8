/// What a stateful service hands back for one request, once the reply may be sent: the reply
/// frame; for a write that changed something, the event to publish (`nil` otherwise); and the
/// ticket of the record the reply depends on (for a retry, the last record appended before it;
/// `nil` for reads and refused requests). Whenever `commit` is set, that record is durable.
public typealias HandledRequest<Event: Sendable> = (reply: [UInt8], event: Event?, commit: CommitTicket?)
