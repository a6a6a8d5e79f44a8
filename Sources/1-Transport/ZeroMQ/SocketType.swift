import CZMQ

/// The messaging pattern a socket plays its part in.
public enum SocketType: Sendable, CaseIterable {
    /// Exclusive pair, for connecting two threads.
    case pair
    /// Publisher: fans messages out to subscribers, dropping for slow ones.
    case publisher
    /// Subscriber: receives what matches its prefix subscriptions.
    case subscriber
    /// Publisher that also receives subscription messages, for proxies.
    case extendedPublisher
    /// Subscriber that sends subscriptions as messages, for proxies.
    case extendedSubscriber
    /// Strict request side of request/reply.
    case request
    /// Strict reply side of request/reply.
    case reply
    /// Asynchronous request side: sends to peers round-robin, no lock-step.
    case dealer
    /// Asynchronous reply side: prefixes each message with the sender's routing id.
    case router
    /// Pipeline source: distributes messages round-robin.
    case push
    /// Pipeline sink: fair-queues messages from all pushers.
    case pull
    /// Raw TCP: talks to non-ZeroMQ peers such as HTTP clients.
    case stream

    var rawValue: Int32 {
        switch self {
        case .pair: ZMQ_PAIR
        case .publisher: ZMQ_PUB
        case .subscriber: ZMQ_SUB
        case .extendedPublisher: ZMQ_XPUB
        case .extendedSubscriber: ZMQ_XSUB
        case .request: ZMQ_REQ
        case .reply: ZMQ_REP
        case .dealer: ZMQ_DEALER
        case .router: ZMQ_ROUTER
        case .push: ZMQ_PUSH
        case .pull: ZMQ_PULL
        case .stream: ZMQ_STREAM
        }
    }
}
