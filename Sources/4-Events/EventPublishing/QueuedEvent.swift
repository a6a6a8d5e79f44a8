import EventSubscription
import Progress
import ZeroMQ

/// An event published and waiting for the publisher thread, its stream's type hidden so that
/// one queue holds the events of every stream in sequence order.
protocol QueuedEvent: AnyObject, Sendable {
    /// The position of the event's stream among the publisher's streams.
    var streamIndex: Int { get }
    /// The event as a snapshot entry, for a stream that snapshots serve.
    var snapshotEntry: ProgressEntry? { get }
    /// The event's numbers; valid once the event is queued.
    var stamp: EventStamp { get }
    /// Gives the event its numbers; called once, under the publisher's lock, before it is queued.
    func number(sequence: UInt64, streamSequence: UInt64, courseSequence: UInt64)
    /// Encodes and sends the event's messages that `subscriptions` select.
    func send(on publisher: Socket, to subscriptions: SubscriptionSet, source: EventSource, xapi: XAPIOptions?) throws(ZMQError)
}

/// An event of one stream, as ``EventPublisher`` queues it. Made on the publishing thread before
/// the lock is taken, so that the allocation and the snapshot entry cost nothing under it.
final class PendingEvent<Event: Sendable>: QueuedEvent, @unchecked Sendable {
    // Unchecked: `stamp` is written once under the publisher's lock before the event is queued,
    // and read only by the publisher thread after it took the event under the same lock.
    private let event: Event
    private let stream: EventStream<Event>
    let streamIndex: Int
    let snapshotEntry: ProgressEntry?
    private(set) var stamp: EventStamp

    init(_ event: Event, stream: EventStream<Event>, streamIndex: Int, revision: UInt64) {
        self.event = event
        self.stream = stream
        self.streamIndex = streamIndex
        snapshotEntry = stream.snapshotEntry?(event, revision)
        stamp = EventStamp(sequence: 0, streamSequence: 0, revision: revision, courseSequence: 0, time: stream.time?(event) ?? 0)
    }

    func number(sequence: UInt64, streamSequence: UInt64, courseSequence: UInt64) {
        stamp = EventStamp(
            sequence: sequence, streamSequence: streamSequence, revision: stamp.revision, courseSequence: courseSequence, time: stamp.time)
    }

    func send(on publisher: Socket, to subscriptions: SubscriptionSet, source: EventSource, xapi: XAPIOptions?) throws(ZMQError) {
        // An XPUB socket drops instead of blocking at its high-water mark, so these never wait.
        let topic = stream.topic(event)
        if subscriptions.wants(topic.utf8) {
            try publisher.send(topic.utf8, options: [.more, .dontWait])
            try publisher.send(stream.encode(event, stamp, source), options: .dontWait)
        }
        guard let statements = stream.statements, let xapi, subscriptions.wants(EventTopic.xapi.utf8, followedBy: topic.utf8) else { return }
        let statementTopic = EventTopic.xapi + topic
        for statement in statements(event, stamp, source, xapi) {
            try publisher.send(statementTopic.utf8, options: [.more, .dontWait])
            try publisher.send(statement, options: .dontWait)
        }
    }
}
