#if canImport(Glibc)
import Glibc
#endif
import LyceumLifecycle
import Synchronization
import ZeroMQ

/// The way to answer, later and from any thread, a request that a ``WorkerPool`` or
/// ``LocalService`` handler did not answer at once: for example a write that may only be
/// acknowledged once its journal sync ends.
///
/// Send exactly one reply per request. A reply for a pool session that has since lost its broker
/// (and so its request) is dropped, as is a second reply: the broker would refuse either.
public struct DeferredReply: Sendable {
    let outbox: ReplyOutbox
    let session: Int
    let request: UInt64
    /// Whether the requester takes a streamed reply (an 18/MDP client of the broker's local
    /// service): PARTIALs through ``sendPartial(_:)``, then the one reply through ``send(_:)``.
    public let streams: Bool

    init(outbox: ReplyOutbox, session: Int, request: UInt64, streams: Bool = false) {
        self.outbox = outbox
        self.session = session
        self.request = request
        self.streams = streams
    }

    /// Hands `body` to the pool's thread, which sends it as the REPLY (18/MDP: the FINAL) of
    /// this request.
    public func send(_ body: [[UInt8]]) {
        outbox.post(ReplyOutbox.Reply(session: session, request: request, body: body, final: true))
    }

    /// Hands `body` to the broker's thread, which sends it as a PARTIAL of this request, before
    /// the reply ``send(_:)`` sends; only when ``streams`` (else the part is logged and dropped).
    public func sendPartial(_ body: [[UInt8]]) {
        outbox.post(ReplyOutbox.Reply(session: session, request: request, body: body, final: false))
    }
}

/// Replies posted from other threads to a pool's thread, with a pipe that its `poll` wakes on.
///
/// The pipe carries a byte only when the outbox goes from empty to non-empty, so a burst of
/// replies (a journal sync acknowledging a batch of writes) costs one system call, not one each;
/// and none when the owning thread posts itself (a sync at the end of its own batch), since it
/// looks at ``hasReplies`` before it sleeps again.
final class ReplyOutbox: Sendable {
    struct Reply: Sendable {
        let session: Int
        let request: UInt64
        let body: [[UInt8]]
        /// Whether it is the request's reply (or FINAL) rather than a PARTIAL.
        let final: Bool
    }

    private let pipe: WakeupPipe
    private let replies = Mutex<[Reply]>([])
    /// The thread whose loop takes the replies, once it has said so (``claim()``).
    private let owner = Mutex<pthread_t?>(nil)

    init() throws(MajordomoError) {
        do { pipe = try WakeupPipe() } catch { throw MajordomoError(error) }
    }

    /// The descriptor to poll for readability.
    var fileDescriptor: Int32 { pipe.fileDescriptor }

    /// Makes the calling thread the owner: the loop that takes the replies and checks
    /// ``hasReplies`` after its own work and before each sleep, so that its own posts need no
    /// wake-up.
    func claim() {
        owner.withLock { $0 = pthread_self() }
    }

    /// Queues `reply` and, when the queue was empty and the caller is not the owning thread,
    /// wakes that thread: at once, or at the end of the caller's ``BatchedSignals`` batch (a
    /// journal's acknowledger posting the replies of one sync), so that a batch of replies costs
    /// one wake-up.
    func post(_ reply: Reply) {
        let wasEmpty = replies.withLock { replies in
            replies.append(reply)
            return replies.count == 1
        }
        guard wasEmpty, owner.withLock({ $0.map { pthread_equal($0, pthread_self()) == 0 } ?? true }) else { return }
        BatchedSignals.signal(self) { [pipe] in pipe.signal() }
    }

    /// Whether a reply was posted and not taken yet; cheaper than ``takeAll()`` when none was.
    var hasReplies: Bool { replies.withLock { !$0.isEmpty } }

    /// Takes every posted reply, oldest first, after emptying the pipe: a reply posted after the
    /// pipe was read either is taken now or writes a new byte, so none waits for a timeout.
    func takeAll() -> [Reply] {
        pipe.reset()
        return replies.withLock { replies in
            var taken: [Reply] = []
            swap(&taken, &replies)
            return taken
        }
    }
}
