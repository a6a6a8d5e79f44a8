import EventSubscription
import LyceumLogging
import Majordomo
import Synchronization
import ZeroMQ

/// The catalog's course and lesson titles for a process without a catalog of its own (`broker`),
/// asked of the catalog service: the course titles (`list_courses`) at most every
/// ``refreshInterval``; the lesson titles (`get_course`) only of courses seen in events, each
/// kept for ``lessonRefreshInterval``, so that a catalog of thousands of courses costs one
/// request per course that has activity, not one per course every half minute. What a failed
/// attempt (no catalog worker yet) would have replaced is kept, so a dashboard shows ids only
/// until one answers.
public final class CatalogTitleCache: Sendable {
    /// How long course titles are kept before they are asked for again (a worker's catalog may reload).
    static let refreshInterval = Duration.seconds(30)
    /// How long a course's lesson titles are kept: they change only with a catalog reload.
    static let lessonRefreshInterval = Duration.seconds(600)
    /// The most courses whose lesson titles are kept; the least recently seen go first.
    static let maxLessonCourses = 1_000
    /// The most bytes of lesson ids and titles kept, all courses together; the least recently
    /// seen courses go first.
    static let maxLessonBytes = 4 << 20
    /// The most `get_course` requests one ``titles(seen:)`` sends: a batch of events from many
    /// new courses, or a catalog that does not answer, delays the dashboard a little only; the
    /// other courses are asked for at the next calls.
    static let maxFetchesPerCall = 8

    /// One course's lesson titles and when to ask for them again.
    private struct Lessons {
        var titles: [String: String]
        var bytes: Int
        var due: ContinuousClock.Instant
        /// When it was last seen in events, in ``State/seen`` ticks: the eviction order.
        var seen: UInt64
    }

    private struct State {
        let call: ([UInt8]) throws -> [UInt8]
        var courses: [CourseTitle] = []
        var listed: ContinuousClock.Instant?
        var lessons: [String: Lessons] = [:]
        var lessonBytes = 0
        var seen: UInt64 = 0

        /// Keeps `titles` for `course`, then evicts the least recently seen courses beyond the bounds.
        mutating func keep(_ titles: [String: String], of course: String, due: ContinuousClock.Instant) {
            let bytes = titles.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count }
            lessonBytes -= lessons[course]?.bytes ?? 0
            lessons[course] = Lessons(titles: titles, bytes: bytes, due: due, seen: seen)
            lessonBytes += bytes
            while lessons.count > CatalogTitleCache.maxLessonCourses || lessonBytes > CatalogTitleCache.maxLessonBytes,
                  let oldest = lessons.min(by: { $0.value.seen < $1.value.seen }) {
                lessonBytes -= oldest.value.bytes
                lessons[oldest.key] = nil
            }
        }
    }

    private let state: Mutex<State>
    private let logger = Logger(component: "dashboard")

    /// A cache asking the broker at `broker`, connecting with `security`; nothing is sent
    /// before the first ``titles(seen:)``.
    public convenience init(broker: String, security: SocketSecurity, context: Context) {
        let configuration = ClientConfiguration(timeout: .seconds(1), attempts: 1, security: security)
        let client = Client(endpoint: broker, configuration: configuration, context: context)
        self.init { request in try client.call("catalog", body: [request]).first ?? [] }
    }

    /// A cache asking through `call`, which sends one request body to the `catalog` service and
    /// returns the reply body (as ``CatalogTitles/fetch(pageSize:_:)``'s).
    public init(call: sending @escaping ([UInt8]) throws -> [UInt8]) {
        state = Mutex(State(call: call))
    }

    /// The catalog's courses in catalog order, with the lesson titles of those among `seen`
    /// (the courses of the events about to be shown) and of others seen before and still kept;
    /// `seen` is asked for whether the catalog listed it or not (the list may have failed).
    /// Blocks for up to the client's timeout per request sent; call it from one thread (a
    /// client's socket is that thread's).
    public func titles(seen: Set<String>) -> [CourseTitle] {
        state.withLock { state in
            let now = ContinuousClock.now
            if state.listed.map({ now - $0 >= Self.refreshInterval }) ?? true {
                state.listed = now
                do {
                    state.courses = try CatalogTitles.fetch(state.call)
                } catch {
                    logger.warning("no course titles from the catalog service yet; the dashboard shows ids", ["error": "\(error)"])
                }
            }
            state.seen += 1
            var fetches = 0
            // Not only the listed courses: the list may have failed while the catalog worker
            // registered, and the first event of a course should name its lesson all the same.
            for course in seen.sorted() {
                state.lessons[course]?.seen = state.seen
                guard fetches < Self.maxFetchesPerCall, state.lessons[course].map({ now >= $0.due }) ?? true else { continue }
                fetches += 1
                do {
                    state.keep(try CatalogTitles.lessons(of: course, state.call), of: course, due: now + Self.lessonRefreshInterval)
                } catch {
                    // Asked again after a course refresh's interval: an unknown course, or a catalog away.
                    state.keep(state.lessons[course]?.titles ?? [:], of: course, due: now + Self.refreshInterval)
                    logger.warning("no lesson titles from the catalog service; the dashboard shows lesson ids",
                                   ["course": course, "error": "\(error)"])
                    // A catalog that does not answer would cost a timeout per course: no more this call.
                    if !(error is EventsError) { fetches = Self.maxFetchesPerCall }
                }
            }
            return state.courses.map { CourseTitle(id: $0.id, title: $0.title, lessons: state.lessons[$0.id]?.titles ?? [:]) }
        }
    }
}
