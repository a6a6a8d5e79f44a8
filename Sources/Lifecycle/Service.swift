/// A long-running part of Lyceum (a broker, a worker session, a publisher) that a
/// ``ServiceGroup`` starts on its own thread and stops in order.
public protocol Service: AnyObject, Sendable {
    /// A short name for logs, such as `broker` or `worker.books.2`.
    var name: String { get }
    /// Does the service's work, blocking the calling thread until ``shutdown()`` is called or
    /// the service fails. Returning means the service has stopped and released what it holds.
    func run() throws
    /// Asks ``run()`` to finish the work in hand and return soon. Safe to call from any
    /// thread, before or during `run()`, and more than once.
    func shutdown()
}
