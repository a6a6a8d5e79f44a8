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
    /// sent through the request's `DeferredReply`.
    public static func handler(_ answer: @escaping Answer) -> WorkerPool.Handler {
        { body, caller, later in
            guard body.count == 1 else {
                let error = ServiceError(
                    .badRequest, "a request is exactly one frame of UTF-8 JSON; this one has \(body.count) frames")
                return [error.replyFrame]
            }
            let handoff = ReplyHandoff()
            answer(body[0], caller) { reply in
                if !handoff.offer(reply) { later.send([reply]) }
            }
            return handoff.endCall().map { [$0] }
        }
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
