import EventSubscription
import Progress

/// What a publisher must know of a stream before any of its events: the name its sequence
/// number is published under, and whether snapshots serve its state.
public protocol PublishedStream: Sendable {
    /// The stream's name; its own sequence number is published as `<name>_seq`, in its events
    /// and in every heartbeat (protocol/events.md, "Sequence numbers").
    var name: String { get }
    /// Whether the stream's events change the state snapshots answer from (the progress table).
    var hasSnapshots: Bool { get }
}

/// One service's events as a publisher takes them: a topic and an encoder. Giving a service
/// events takes one of these in its registration; nothing in this module names the service.
///
/// A publisher numbers and queues an event on the thread that publishes it, and calls `topic`
/// and `encode` later on its own thread, and only when some subscriber takes the topic: so both
/// must be pure functions of the event and its stamp.
public struct EventStream<Event: Sendable>: PublishedStream {
    /// The stream's name; its sequence number is published as `<name>_seq`.
    public let name: String
    /// The topic frame of an event; ids in it escaped with ``EventTopic/escape(_:)``.
    let topic: @Sendable (Event) -> String
    /// The body of an event as published with its stamp by a source.
    let encode: @Sendable (Event, EventStamp, EventSource) -> [UInt8]
    /// The event as a snapshot entry, for the stream whose state snapshots serve.
    let snapshotEntry: (@Sendable (Event, _ revision: UInt64) -> ProgressEntry)?
    /// The xAPI statements describing an event, sent on `xapi/` followed by its topic.
    let statements: (@Sendable (Event, EventStamp, EventSource, XAPIOptions) -> [[UInt8]])?
    /// When the event happened, in milliseconds since 1970, read when it is published rather
    /// than when it is encoded (which may be later); `nil` when the event carries its own time.
    let time: (@Sendable (Event) -> Int64)?

    /// Whether snapshots serve this stream's state.
    public var hasSnapshots: Bool { snapshotEntry != nil }

    /// A stream named `name` (its sequence number is published as `<name>_seq`) whose events are
    /// sent on `topic` with the body `encode` makes; snapshots do not serve it.
    public init(
        name: String, topic: @escaping @Sendable (Event) -> String,
        encode: @escaping @Sendable (Event, EventStamp, EventSource) -> [UInt8]
    ) {
        self.init(name: name, topic: topic, encode: encode, snapshotEntry: nil, statements: nil, time: nil)
    }

    init(
        name: String, topic: @escaping @Sendable (Event) -> String,
        encode: @escaping @Sendable (Event, EventStamp, EventSource) -> [UInt8],
        snapshotEntry: (@Sendable (Event, UInt64) -> ProgressEntry)?,
        statements: (@Sendable (Event, EventStamp, EventSource, XAPIOptions) -> [[UInt8]])?,
        time: (@Sendable (Event) -> Int64)?
    ) {
        self.name = name
        self.topic = topic
        self.encode = encode
        self.snapshotEntry = snapshotEntry
        self.statements = statements
        self.time = time
    }
}

/// The numbers a publisher gave one event, which its encoder writes into the body
/// (protocol/events.md, "Sequence numbers").
public struct EventStamp: Sendable {
    /// Among all of the source's events (`seq`).
    public let sequence: UInt64
    /// Among the source's events of this stream (`<name>_seq`).
    public let streamSequence: UInt64
    /// The journal position of the durable write the event describes (`revision`).
    public let revision: UInt64
    /// Among the source's events of the event's course (`course_seq`), for a stream that
    /// snapshots serve; 0 for any other.
    public let courseSequence: UInt64
    /// When the event happened, in milliseconds since 1970, for a stream that reads it when
    /// publishing; 0 for any other.
    public let time: Int64
}
