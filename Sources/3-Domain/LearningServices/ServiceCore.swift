import JSON
import Journal
import LyceumSupport

/// State that remembers idempotent writes alongside its entities.
public protocol LedgeredState: JournalState, Sendable {
    /// The service's record of recent idempotent writes.
    var ledger: RequestLedger { get }
}

/// What a write operation decided, computed from the current state without changing it.
struct WritePlan<State, Event> {
    /// The reply frame, `{"ok":true,"result":…}`: written whole by the plan, so that a result
    /// is not serialized first and then copied into its reply.
    var reply: [UInt8]
    /// The changes that perform the write; empty when the write changes nothing.
    var changes: [JournalChange]
    /// What changed, for publishing; `nil` when nothing did.
    var event: Event?
    /// Performs `changes` on the state from what the plan already holds, leaving it exactly as
    /// applying each change would, so that the write path does not decode the payloads it has
    /// just encoded (issue 19: decoding the record again was 13% of a book create's
    /// instructions and 17% of a quiz submission's); `nil` applies the changes one by one, as
    /// replay does.
    var perform: ((inout State) throws(UndecodableValue) -> Void)? = nil
}

/// The write path shared by the stateful services: under the state lock, plan the write, append
/// it to the log and apply it; outside the lock, ask the log to call back once the record is
/// durable; only then reply.
final class ServiceCore<State: LedgeredState>: Sendable {
    /// The state and the ticket of the last record appended for it.
    private struct Guarded {
        var state: State
        var lastTicket: CommitTicket?
        /// A journaled change the state could not take (a service writing a value its own
        /// decoder refuses): a snapshot of the state would drop it, so compaction is refused.
        var unapplied: UndecodableValue?
    }

    /// Behind a lock whose waiters sleep: worker threads contend for it on every write, and a
    /// spinning waiter would burn the core its holder needs (`Monitor` says what was measured).
    private let guarded: Monitor<Guarded>
    private let log: any ChangeLog
    /// Milliseconds since 1970: when a ledger entry was recorded, which decides how long it is kept.
    private let now: @Sendable () -> Int64

    init(state: consuming State, log: any ChangeLog, now: @escaping @Sendable () -> Int64 = ServiceEnvironment.live.ledgerClock) {
        guarded = Monitor(Guarded(state: state, lastTicket: nil))
        self.log = log
        self.now = now
    }

    /// Runs `body` on the current state under the lock; for reads.
    func read<T>(_ body: (borrowing State) throws(ServiceError) -> T) throws(ServiceError) -> T {
        try guarded.withLock { (guarded) throws(ServiceError) -> T in try body(guarded.state) }
    }

    /// Runs `prepare` and then `body` on the current state under the lock: for a read that needs
    /// derived state built first (a learner's list orders, deferred at replay), which `prepare`
    /// builds without changing what the state holds.
    func read<T>(preparing prepare: (inout State) -> Void, _ body: (borrowing State) throws(ServiceError) -> T) throws(ServiceError) -> T {
        try guarded.withLock { (guarded) throws(ServiceError) -> T in
            prepare(&guarded.state)
            return try body(guarded.state)
        }
    }

    /// A copy of the state as of the last applied write. Copy-on-write makes this O(1); the next
    /// write pays for one copy of the top-level tables.
    var currentState: State { guarded.withLock { $0.state } }

    /// A copy of the state together with `sequence()` evaluated under the same lock that orders
    /// appends and applies, so that the two describe exactly the same writes.
    /// - Throws: `UndecodableValue` when a journaled change could not be applied: the state
    ///   misses it, so a compaction from this copy would lose it.
    func capture(sequence: () -> UInt64) throws(UndecodableValue) -> (state: State, sequence: UInt64) {
        try guarded.withLock { (guarded) throws(UndecodableValue) in
            if let unapplied = guarded.unapplied { throw unapplied }
            return (guarded.state, sequence())
        }
    }

    /// Performs one write for `learner` and calls `completion` exactly once with its reply frame,
    /// its event and the ticket of the record that stored it (whose sequence orders the writes as
    /// they were applied). A write that was appended completes only once the log says it is durable,
    /// possibly later and on the log's thread; a refused write completes at once on the caller's
    /// thread, with no event and no ticket.
    func write<Event: Sendable>(
        _ request: Request, learner: String, plan: (borrowing State) throws(ServiceError) -> WritePlan<State, Event>,
        completion: @escaping @Sendable (HandledRequest<Event>) -> Void
    ) {
        let outcome = guarded.withLock { (guarded) -> Result<(reply: [UInt8], ticket: CommitTicket?, event: Event?), ServiceError> in
            // A retry, or a write that changes nothing, reports state that earlier records made:
            // it waits for the last of them, so that no reply gets ahead of durability.
            if let requestID = request.requestID, let entry = guarded.state.ledger.entry(learner: learner, requestID: requestID) {
                guard entry.fingerprint == request.fingerprint else {
                    return .failure(ServiceError(
                        .conflict, "request_id \(requestID) was already used for a different request", field: "$.request_id"))
                }
                return .success((entry.reply, guarded.lastTicket, nil))
            }
            let decided: WritePlan<State, Event>
            do throws(ServiceError) { decided = try plan(guarded.state) } catch { return .failure(error) }
            let reply = decided.reply
            var changes = decided.changes
            if let requestID = request.requestID {
                changes += guarded.state.ledger.recording(
                    reply, fingerprint: request.fingerprint, learner: learner, requestID: requestID, now: now())
            }
            guard !changes.isEmpty else { return .success((reply, guarded.lastTicket, nil)) }
            // The plan's own changes first (by `perform` when it has one), then the ledger's.
            let replayed = decided.perform == nil ? changes[...] : changes[decided.changes.count...]
            let ticket: CommitTicket
            do {
                ticket = try log.append(changes)
            } catch {
                return .failure(ServiceError(refusedAppend: error))
            }
            guarded.lastTicket = ticket
            do throws(UndecodableValue) {
                try decided.perform?(&guarded.state)
                for change in replayed { try guarded.state.apply(change) }
            } catch {
                guarded.unapplied = guarded.unapplied ?? error
                return .failure(ServiceError(.internal, "the write was journaled but could not be applied: \(error)"))
            }
            return .success((reply, ticket, decided.event))
        }
        // Outside the lock: with a log that is durable at once, `completion` runs inside this call.
        switch outcome {
        case .failure(let error):
            completion(HandledRequest(error, to: request))
        case .success(let done):
            let (op, requestID) = (request.op, request.requestID)
            guard let ticket = done.ticket else {
                completion(HandledRequest(reply: done.reply, event: done.event, op: op, requestID: requestID))
                return
            }
            log.whenDurable(ticket) { durability in
                switch durability {
                case .success:
                    completion(HandledRequest(reply: done.reply, event: done.event, commit: ticket, op: op, requestID: requestID))
                case .failure(let error):
                    // A journal's error names server files: the client gets its code, the server's log the file.
                    let reason = (error as? JournalError).map { "journal \($0.code)" } ?? "\(error)"
                    completion(HandledRequest(reply: Reply.failure(ServiceError(
                        .unavailable, "the write may not be durable (\(reason)); it is not acknowledged: retry with the same request_id")),
                                              op: op, requestID: requestID, errorCode: .unavailable))
                }
            }
        }
    }
}
