import EventSubscription
import LyceumLifecycle
import LyceumLogging
import LyceumSupport
import Synchronization
import ZeroMQ

/// An XSUB/XPUB proxy: publishers in several processes connect to its XSUB side, dashboards
/// subscribe on its XPUB side, and subscriptions travel upstream so that publishers still filter.
/// Messages pass unchanged, so sequence numbers stay per source. Hosted by `lyceum broker` or
/// `serve` as one more ``Component``.
public final class EventForwarder: Component {
    /// Endpoints the XSUB side binds, for publishers' ``EventPublisherConfiguration/forwarderEndpoints``.
    public let publisherEndpoints: [String]
    /// Endpoints the XPUB side binds, for subscribers.
    public let subscriberEndpoints: [String]
    /// Messages queued per subscriber before the XPUB side drops that subscriber's messages.
    public let sendHighWaterMark: Int32
    /// The XSUB side's security: a CURVE server (ZAP domain `lyceum.forwarder`) when CURVE is on.
    public let publisherSecurity: SocketSecurity
    /// The XPUB side's security: a CURVE server (ZAP domain `lyceum.events`) when CURVE is on.
    public let subscriberSecurity: SocketSecurity
    private let context: Context
    private let wakeup: WakeupPipe
    private let stopping = Atomic<Bool>(false)
    private let subscriberRebindRequested = Atomic<Bool>(false)
    private let publisherRebindRequested = Atomic<Bool>(false)
    private let binding = AwaitedResult<(publishers: [String], subscribers: [String]), EventsError>()
    private let forwarded = Atomic<UInt64>(0)

    /// A forwarder that will bind these endpoints when it runs.
    public init(
        publisherEndpoints: [String], subscriberEndpoints: [String], sendHighWaterMark: Int32 = 10_000,
        publisherSecurity: SocketSecurity = .plaintext, subscriberSecurity: SocketSecurity = .plaintext, context: Context
    ) throws(EventsError) {
        guard !publisherEndpoints.isEmpty, !subscriberEndpoints.isEmpty else {
            throw EventsError(.invalidArgument, "a forwarder needs a publisher endpoint and a subscriber endpoint")
        }
        self.publisherEndpoints = publisherEndpoints
        self.subscriberEndpoints = subscriberEndpoints
        self.sendHighWaterMark = sendHighWaterMark
        self.publisherSecurity = publisherSecurity
        self.subscriberSecurity = subscriberSecurity
        self.context = context
        do { wakeup = try WakeupPipe() } catch { throw EventsError(error) }
    }

    /// Messages forwarded from publishers to subscribers so far.
    public var forwardedMessages: UInt64 { forwarded.load(ordering: .relaxed) }

    /// Binds both sides, then forwards until ``shutdown()``.
    /// - Throws: ``EventsError`` when an endpoint cannot be bound.
    public func run() throws {
        let logger = Logger(component: "events.forwarder")
        let upstream: Socket
        let downstream: Socket
        do {
            upstream = try context.socket(.extendedSubscriber)
            try upstream.set(.maxMessageSize, to: EventTopic.maxFrameBytes)
            try upstream.secure(publisherSecurity)
            for endpoint in publisherEndpoints { try upstream.bind(endpoint) }
            downstream = try context.socket(.extendedPublisher)
            try downstream.set(.sendHighWaterMark, to: sendHighWaterMark)
            // Bounds each prefix before libzmq stores it, here and in every publisher upstream,
            // since only what this socket accepts is passed up through the XSUB.
            try downstream.set(.maxMessageSize, to: EventTopic.maxSubscriptionMessageBytes)
            try downstream.secure(subscriberSecurity)
            for endpoint in subscriberEndpoints { try downstream.bind(endpoint) }
        } catch {
            let failure = EventsError(error)
            binding.settle(.failure(failure))
            logger.error("cannot bind the forwarder", ["error": failure.description])
            throw failure
        }
        binding.settle(.success((upstream.endpoints, downstream.endpoints)))
        logger.info("forwarding events", ["publishers": upstream.endpoints.joined(separator: ","), "subscribers": downstream.endpoints.joined(separator: ",")])
        do {
            var poller = Poller()
            let wakeIndex = poller.add(fileDescriptor: wakeup.fileDescriptor)
            let upstreamIndex = try poller.add(upstream)
            let downstreamIndex = try poller.add(downstream)
            let message = Message()
            while !stopping.load(ordering: .acquiring) {
                try poller.poll(timeout: nil)
                if poller.events(at: wakeIndex).contains(.readable) { wakeup.reset() }
                if subscriberRebindRequested.exchange(false, ordering: .acquiringAndReleasing) {
                    let bound = downstream.endpoints
                    try downstream.rebind(bound)
                    logger.info("subscriber endpoints bound again: every subscriber handshakes anew", ["subscribers": bound.joined(separator: ",")])
                }
                if publisherRebindRequested.exchange(false, ordering: .acquiringAndReleasing) {
                    let bound = upstream.endpoints
                    try upstream.rebind(bound)
                    logger.info("publisher endpoints bound again: every publisher handshakes anew", ["publishers": bound.joined(separator: ",")])
                }
                if poller.events(at: upstreamIndex).contains(.readable) {
                    let count = try relay(from: upstream, to: downstream, through: message)
                    forwarded.add(count, ordering: .relaxed)
                }
                if poller.events(at: downstreamIndex).contains(.readable) {
                    try relay(from: downstream, to: upstream, through: message)
                }
            }
        } catch {
            logger.error("forwarder stopped on a socket error", ["error": error.description])
            throw EventsError(error)
        }
        logger.info("forwarder stopped", ["forwarded": "\(forwardedMessages)"])
    }

    /// Ends every subscriber's connection by binding the XPUB side's endpoints again, on the
    /// forwarder's thread, soon: each reconnects and passes the ZAP handler again (see
    /// ``EventPublisher/rebindSubscribers()``).
    public func rebindSubscribers() {
        subscriberRebindRequested.store(true, ordering: .releasing)
        wakeup.signal()
    }

    /// Ends every publisher's connection the same way, on the XSUB side, after a reload that
    /// revoked a key's `publishEvents`; publishers still authorised reconnect by themselves, and
    /// the XSUB sends them the subscriptions again.
    public func rebindPublishers() {
        publisherRebindRequested.store(true, ordering: .releasing)
        wakeup.signal()
    }

    /// Stops forwarding; `run()` returns.
    public func shutdown() {
        stopping.store(true, ordering: .releasing)
        wakeup.signal()
    }

    /// Waits until `run()` has bound both sides.
    /// - Returns: the bound endpoints of the publisher (XSUB) and subscriber (XPUB) sides.
    /// - Throws: the bind failure, or ``EventsError/Code/timedOut`` after `timeout`.
    public func waitUntilBound(timeout: Duration = .seconds(5)) throws(EventsError) -> (publishers: [String], subscribers: [String]) {
        guard let bound = binding.wait(timeout: timeout) else {
            throw EventsError(.timedOut, "the forwarder has not bound its endpoints yet")
        }
        return try bound.get()
    }

    /// Moves every queued message from `source` to `destination`, frame by frame, without waiting.
    /// - Returns: how many messages moved.
    @discardableResult
    private func relay(from source: Socket, to destination: Socket, through message: Message) throws(ZMQError) -> UInt64 {
        var count: UInt64 = 0
        while count < 10_000, try source.receive(into: message, options: .dontWait) {
            while true {
                let more = message.hasMore
                // XPUB drops for slow subscribers and XSUB never fills, so this does not block.
                let options: SendOptions = more ? [.more, .dontWait] : .dontWait
                try message.withUnsafeBytes { (bytes) throws(ZMQError) in _ = try destination.send(bytes, options: options) }
                guard more else { break }
                _ = try source.receive(into: message)
            }
            count += 1
        }
        return count
    }
}
