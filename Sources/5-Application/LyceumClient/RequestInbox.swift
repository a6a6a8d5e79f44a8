import Synchronization
import ZeroMQ

/// One request on its way through the connection's thread: the frame to send, which attempt
/// this is, and where its outcome goes.
struct PendingCall: Sendable {
    let service: String
    let op: String
    /// The request's one JSON frame, built once so that every attempt carries the same `request_id`.
    let body: [UInt8]
    var attempt = 1
    /// Whether an attempt reached a broker that then never answered: the request may have been
    /// handled, which a later attempt's `broker_unreachable` must not hide.
    var reachedBroker = false
    let outcome: CheckedContinuation<Result<[UInt8], LyceumError>, Never>

    /// Hands the caller its outcome; called exactly once per call.
    func finish(_ result: Result<[UInt8], LyceumError>) { outcome.resume(returning: result) }
}

/// Where callers on any thread leave requests for the connection's thread, and the pipe that
/// wakes it when they do.
final class RequestInbox: Sendable {
    private struct Contents {
        var calls: [PendingCall] = []
        var closed = false
    }

    private let contents = Mutex(Contents())
    /// Signaled for every new call and for ``close()``.
    let wakeup: WakeupPipe

    init() throws(ZMQError) {
        wakeup = try WakeupPipe()
    }

    /// Queues `call` and wakes the connection's thread; a closed inbox finishes it with ``LyceumError/Code/closed``.
    func submit(_ call: PendingCall) {
        // Only the first call into an empty inbox signals: the thread empties the pipe before
        // it takes the inbox, so later ones are taken with it (a write(2) saved per call).
        let outcome: (accepted: Bool, first: Bool) = contents.withLock { contents in
            guard !contents.closed else { return (false, false) }
            contents.calls.append(call)
            return (true, contents.calls.count == 1)
        }
        guard outcome.accepted else {
            call.finish(.failure(LyceumError(code: .closed, message: "the client is closed", service: call.service, op: call.op)))
            return
        }
        if outcome.first { wakeup.signal() }
    }

    /// Refuses new calls from now on and wakes the connection's thread to finish the rest.
    func close() {
        contents.withLock { $0.closed = true }
        wakeup.signal()
    }

    /// Everything queued since the last call, and whether the inbox is closed.
    func take() -> (calls: [PendingCall], closed: Bool) {
        contents.withLock { contents in
            defer { contents.calls = [] }
            return (contents.calls, contents.closed)
        }
    }

    /// Sleeps until ``wakeup`` is signaled or `timeout` passes (`nil`: until signaled).
    func wait(timeout: Duration?) throws(ZMQError) {
        var poller = Poller()
        poller.add(fileDescriptor: wakeup.fileDescriptor)
        try poller.poll(timeout: timeout)
        wakeup.reset()
    }
}
