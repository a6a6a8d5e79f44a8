import Access
import LearningServices
import Majordomo
import Synchronization

/// Where Majordomo bodies meet the learning services: a request body must be exactly one frame,
/// which goes to the service untouched; anything else gets the contract's `bad_request` reply.
/// Sockets never parse JSON, and services never see frames.
public enum FrameHandler {
    /// A service's answer to one request frame from `caller`: it calls `reply` exactly once,
    /// during the call (reads, refusals) or later from any thread (a write once it is durable).
    public typealias Answer = @Sendable (_ frame: [UInt8], _ caller: Caller, _ reply: @escaping @Sendable ([UInt8]) -> Void) -> Void

    /// The handler, for a `WorkerPool` or a broker's `LocalService`, answering each request
    /// body with `answer`, for the caller the pool or the broker names: a reply given during the call is returned at once, a later one is
    /// sent through the request's `DeferredReply`. When the requester takes streamed replies (an
    /// 18/MDP client), a page with more to come goes as a PARTIAL and the next is asked for, up to
    /// ``StreamedPages/maxPieces`` pieces (protocol/majordomo.md, "Streamed replies").
    public static func handler(_ answer: @escaping Answer) -> WorkerPool.Handler {
        { body, caller, later in
            guard body.count == 1 else {
                let error = ServiceError(
                    .badRequest, "a request is exactly one frame of UTF-8 JSON; this one has \(body.count) frames")
                return [error.replyFrame]
            }
            let handoff = ReplyHandoff()
            let pages = later.streams ? StreamedPages(caller: caller, answer: answer, later: later) : nil
            answer(body[0], caller) { reply in
                if let pages, pages.streamed(reply, answering: body[0]) { return }
                if !handoff.offer(reply) { later.send([reply]) }
            }
            return handoff.endCall().map { [$0] }
        }
    }
}

/// The pages of one list streamed to a client that takes PARTIALs: each page with more to come
/// goes as a PARTIAL, and the service is asked for the next as a client paging by
/// `next_cursor` would; the last page, or the one that reaches ``maxPieces``, is the reply.
final class StreamedPages: Sendable {
    /// The most pieces (PARTIALs and the FINAL) one request is answered with: each is within the
    /// reply byte budget, so a stream is at most this many budgets, and a client continues past
    /// it from the FINAL's `next_cursor`.
    static let maxPieces = 16

    private let caller: Caller
    private let answer: FrameHandler.Answer
    private let later: DeferredReply
    private let partialsSent = Mutex(0)

    init(caller: Caller, answer: @escaping FrameHandler.Answer, later: DeferredReply) {
        self.caller = caller
        self.answer = answer
        self.later = later
    }

    /// Sends `reply`, the answer to `request`, as a PARTIAL and asks for the next page, when it
    /// is a page with more to come and the stream has room; every later page then goes through
    /// the deferred reply, the last as the FINAL.
    /// - Returns: `false`, having sent nothing, when `reply` is the last piece, for the caller to send.
    func streamed(_ reply: [UInt8], answering request: [UInt8]) -> Bool {
        guard let next = ListContinuation.nextRequest(after: reply, to: request),
              partialsSent.withLock({ sent in
                  guard sent < Self.maxPieces - 1 else { return false }
                  sent += 1
                  return true
              }) else { return false }
        later.sendPartial([reply])
        answer(next, caller) { [self] page in
            if !streamed(page, answering: next) { later.send([page]) }
        }
        return true
    }
}

/// Tells a reply given during the handler's call, which the handler returns, from a later one,
/// which must go through the deferred reply.
private final class ReplyHandoff: Sendable {
    private struct State {
        var callEnded = false
        var reply: [UInt8]?
    }

    private let state = Mutex(State())

    /// Keeps `reply` for the call to return; `false` once the call has ended.
    func offer(_ reply: [UInt8]) -> Bool {
        state.withLock { state in
            guard !state.callEnded else { return false }
            state.reply = reply
            return true
        }
    }

    /// Ends the call: the reply given during it, if any; later replies are refused by `offer`.
    func endCall() -> [UInt8]? {
        state.withLock { state in
            state.callEnded = true
            return state.reply
        }
    }
}
