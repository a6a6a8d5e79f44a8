import CZMQ
import LyceumSupport
import LyceumSupport

/// Waits until any of several sockets or plain file descriptors is ready (`zmq_poll`).
///
/// Like the sockets it holds, a poller belongs to one thread at a time.
public struct Poller {
    private var items: [zmq_pollitem_t] = []
    // Keeps the polled sockets open for as long as the poller refers to them.
    private var sockets: [Socket?] = []

    /// Creates an empty poller.
    public init() {}

    /// Adds a socket to watch for `events`.
    /// - Returns: the index that ``events(at:)`` reports it under.
    @discardableResult
    public mutating func add(_ socket: Socket, events: PollEvents = .readable) throws(ZMQError) -> Int {
        items.append(zmq_pollitem_t(socket: try socket.open("poll"), fd: -1, events: events.rawValue, revents: 0))
        sockets.append(socket)
        return items.count - 1
    }

    /// Adds a plain file descriptor (a pipe, a `signalfd`, a TCP socket) to watch for `events`.
    /// - Returns: the index that ``events(at:)`` reports it under.
    @discardableResult
    public mutating func add(fileDescriptor: Int32, events: PollEvents = .readable) -> Int {
        items.append(zmq_pollitem_t(socket: nil, fd: fileDescriptor, events: events.rawValue, revents: 0))
        sockets.append(nil)
        return items.count - 1
    }

    /// Waits until an item is ready or `timeout` passes (`nil`: forever). A signal ends the
    /// wait early with nothing ready.
    /// - Returns: how many items are ready; 0 on timeout.
    @discardableResult
    public mutating func poll(timeout: Duration?) throws(ZMQError) -> Int {
        // Rounded up so that a short wait never becomes a busy loop.
        let milliseconds = timeout.map { Int(clamping: max(0, $0.millisecondsRoundedUp)) } ?? -1
        let count = Int32(items.count)
        let result = items.withUnsafeMutableBufferPointer { zmq_poll($0.baseAddress, count, milliseconds) }
        do throws(ZMQError) {
            return Int(try check(result, "zmq_poll"))
        } catch where error.code == .interrupted {
            for index in items.indices { items[index].revents = 0 }
            return 0
        }
    }

    /// What the item at `index` was found ready for by the last ``poll(timeout:)``.
    public func events(at index: Int) -> PollEvents {
        PollEvents(rawValue: items[index].revents)
    }
}
