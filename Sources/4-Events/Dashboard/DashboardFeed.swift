import EventSubscription
import Synchronization
import ZeroMQ

/// What the dashboard's streams are made of, shared by the bridge's thread, which records
/// events and snapshots, and the HTTP endpoint's thread, which opens streams and takes the
/// chunks to send on them (protocol/events.md, "The dashboard's stream").
///
/// It keeps each course's figures, the catalog's titles, and a ring of the last
/// ``ringCapacity`` events, so that a browser reconnecting with `Last-Event-ID` receives exactly
/// the events it missed while the ring still holds the one it saw last, and a fresh snapshot
/// otherwise. Every chunk posted for open streams has a position, one more than the last, so a
/// stream opened while chunks wait to be taken never receives one its opening already covered.
final class DashboardFeed: Sendable {
    /// Events kept for reconnecting browsers.
    static let ringCapacity = 1024
    /// Events a snapshot carries for the page's feed of recent events.
    static let recentInSnapshot = 50

    /// One entry of the ring: an event, or the point where the state was loaded from a
    /// snapshot at `id` (so that a browser whose last event id is that snapshot's can resume).
    private struct Recorded {
        let id: UInt64
        /// The event's body; `nil` for a snapshot's point.
        let body: [UInt8]?
    }

    private struct State {
        var source: String?
        var titles: [CourseTitle] = []
        var figures: [String: CourseFigures] = [:]
        var ring: [Recorded] = []
        var chunks: [(position: UInt64, bytes: [UInt8])] = []
        var position: UInt64 = 0

        /// The id of the latest event or snapshot: a new stream's snapshot carries it.
        var latestID: UInt64 { ring.last?.id ?? 0 }

        func snapshotFrame() -> [UInt8] {
            let recent = ring.suffix(DashboardFeed.recentInSnapshot).compactMap(\.body)
            let body = DashboardMessages.snapshot(source: source, id: latestID, titles: titles, figures: figures, recent: recent)
            return DashboardMessages.frame(id: latestID, event: "snapshot", data: body)
        }

        mutating func post(_ bytes: [UInt8]) {
            position += 1
            chunks.append((position, bytes))
            // The endpoint's thread takes chunks at least every poll interval; should it stall,
            // streams are re-sent a snapshot rather than this list growing without bound.
            if chunks.count > DashboardFeed.ringCapacity {
                chunks = [(position, snapshotFrame())]
            }
        }

        mutating func remember(_ recorded: Recorded) {
            ring.append(recorded)
            if ring.count > DashboardFeed.ringCapacity { ring.removeFirst(ring.count - DashboardFeed.ringCapacity) }
        }
    }

    private let state = Mutex(State())
    /// Readable when chunks wait: the endpoint's loop polls it.
    let wakeup: WakeupPipe

    /// An empty feed.
    /// - Throws: `ZMQError` when the wake-up pipe cannot be opened (out of descriptors).
    init() throws(ZMQError) { wakeup = try WakeupPipe() }

    /// Sets the courses' titles, in catalog order, for what follows.
    func setTitles(_ titles: [CourseTitle]) {
        state.withLock { $0.titles = titles }
    }

    /// The catalog's entry for `course`, if it has one.
    func title(of course: String) -> CourseTitle? {
        state.withLock { state in state.titles.first { $0.id == course } }
    }

    /// Records an event applied to the bridge's state, with its course's figures after it, and
    /// posts it to open streams.
    func record(_ event: ReceivedProgressEvent, figures: CourseFigures) {
        let title = title(of: event.course)
        let body = DashboardMessages.event(event, title: title?.title, lessonTitle: event.lesson.flatMap { title?.lessons[$0] }, figures: figures)
        let frame = DashboardMessages.frame(id: event.sequence, event: "progress", data: body)
        state.withLock { state in
            state.source = event.source
            state.figures[event.course] = figures
            state.remember(Recorded(id: event.sequence, body: body))
            state.post(frame)
        }
        wakeup.signal()
    }

    /// Replaces the state with one loaded from a snapshot of `source` at `sequence` (at start,
    /// or repairing a gap) and posts the new snapshot to open streams: events before it can no
    /// longer be resumed from, since some were missed.
    func reload(source: String, sequence: UInt64, figures: [String: CourseFigures]) {
        state.withLock { state in
            state.source = source
            state.figures = figures
            state.ring.removeAll()
            state.remember(Recorded(id: sequence, body: nil))
            state.post(state.snapshotFrame())
        }
        wakeup.signal()
    }

    /// What a new stream starts with: when `lastEventID` is an id the ring holds and the events
    /// after it take at most `limit` bytes, those events; otherwise a snapshot. And the
    /// position of the last chunk it covers.
    func open(lastEventID: String?, limit: Int) -> (bytes: [UInt8], position: UInt64) {
        state.withLock { state in
            if let text = lastEventID, let id = UInt64(text), let index = state.ring.lastIndex(where: { $0.id == id }) {
                var missed: [UInt8] = []
                for recorded in state.ring[(index + 1)...] {
                    guard let body = recorded.body else { continue }
                    missed += DashboardMessages.frame(id: recorded.id, event: "progress", data: body)
                    // More than a stream may hold unsent: a snapshot says the same in fewer bytes.
                    if missed.count > limit { return (state.snapshotFrame(), state.position) }
                }
                return (missed, state.position)
            }
            return (state.snapshotFrame(), state.position)
        }
    }

    /// The chunks posted since the last take, and empties the wake-up pipe.
    func takeChunks() -> [(position: UInt64, bytes: [UInt8])] {
        wakeup.reset()
        return state.withLock { state in
            defer { state.chunks.removeAll(keepingCapacity: true) }
            return state.chunks
        }
    }
}
