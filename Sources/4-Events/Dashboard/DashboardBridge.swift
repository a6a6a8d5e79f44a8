import EventSubscription
import LyceumLifecycle
import LyceumLogging
import Synchronization
import ZeroMQ

/// The thread that turns the process's own event stream into the dashboard's state: a
/// ``ProgressSubscriber`` connected in-process (`inproc://`) to the publisher (`serve`) or the
/// forwarder's output (`broker`), so no second network hop, no port and no keys are involved.
/// It mirrors every learner's progress (a snapshot first, then events, and a new snapshot
/// when a gap shows) and records each event with its course's new figures in the
/// ``DashboardFeed``.
final class DashboardBridge: Component {
    private let context: Context
    private let feed: DashboardFeed
    private let options: ProgressSubscriber.Options
    private let titles: @Sendable (_ seen: Set<String>) -> [CourseTitle]
    private let stopping = Atomic<Bool>(false)
    private let logger = Logger(component: "dashboard")

    /// A bridge subscribing at ``DashboardComponents/eventsEndpoint``; snapshots come from `snapshotEndpoint`, or,
    /// when `nil`, from the endpoint each source's heartbeats advertise, reached with
    /// `security`'s keys (a CURVE client of the key advertised beside it). `titles` gives the
    /// catalog's courses, with lesson titles at least for those `seen` (the courses of the batch
    /// of events about to be recorded); it is read again with every batch, so a reloaded catalog shows.
    init(context: Context, feed: DashboardFeed, snapshotEndpoint: String?, security: SocketSecurity,
         titles: @escaping @Sendable (_ seen: Set<String>) -> [CourseTitle]) {
        self.context = context
        self.feed = feed
        var options = ProgressSubscriber.Options(eventsEndpoint: DashboardComponents.eventsEndpoint, snapshotEndpoint: snapshotEndpoint)
        options.security = security
        self.options = options
        self.titles = titles
    }

    /// Mirrors the event stream into the feed until ``shutdown()``.
    /// - Throws: ``EventsError`` when the subscriber's socket fails.
    func run() throws {
        let subscriber = try ProgressSubscriber(context: context, options: options)
        feed.setTitles(titles([]))
        do {
            apply(try subscriber.synchronize(), from: subscriber)
        } catch {
            // The publisher answers once it runs; until then heartbeats lead to a snapshot.
            logger.warning("no snapshot yet; the dashboard waits for the publisher's heartbeat", ["error": error.description])
        }
        while !stopping.load(ordering: .relaxed) {
            let updates = try subscriber.poll(timeout: .milliseconds(100))
            if !updates.isEmpty { apply(updates, from: subscriber) }
        }
    }

    /// Stops within a tenth of a second.
    func shutdown() { stopping.store(true, ordering: .relaxed) }

    private func apply(_ updates: [ProgressSubscriber.Update], from subscriber: ProgressSubscriber) {
        feed.setTitles(titles(Set(updates.compactMap { if case .event(let event) = $0 { event.course } else { nil } })))
        for update in updates {
            switch update {
            case .event(let event):
                feed.record(event, figures: CourseFigures(course: event.course, entries: subscriber.entries(inCourse: event.course)))
            case .synchronized(let source, let sequence, _), .gapRepaired(let source, _, _, let sequence):
                feed.reload(source: source, sequence: sequence, figures: CourseFigures.byCourse(subscriber.entries.values))
            case .gapUnrepaired(let source, let reason):
                logger.warning("the dashboard missed events and cannot repair them yet", ["source": source, "reason": reason])
            case .malformed(let detail):
                logger.warning("the dashboard ignored a malformed event", ["detail": detail])
            case .heartbeat:
                break
            }
        }
    }
}
