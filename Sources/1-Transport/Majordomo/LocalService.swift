/// A service the broker answers itself, on its own thread, instead of handing its requests to
/// workers: the fast path of a process that runs the broker and the service together.
///
/// Clients see an ordinary 7/MDP service: the same request and reply frames, the same error
/// replies. What differs is inside the process: no worker socket, no thread hand-off, no MDP
/// framing per request. The handler must be quick and must not block, since every client of
/// the broker waits while it runs; work that waits (a journal sync) answers later through its
/// ``DeferredReply``. No worker may register for a local service's name.
public struct LocalService: Sendable {
    /// The service name clients address.
    public let name: String
    /// Answers a request body, as a ``WorkerPool`` handler does; the caller is the one the
    /// broker looked up for the request (`Caller.unverified` without a key directory).
    public let handler: WorkerPool.Handler

    /// A local service called `name`, answered by `handler`.
    public init(name: String, handler: @escaping WorkerPool.Handler) {
        self.name = name
        self.handler = handler
    }
}
