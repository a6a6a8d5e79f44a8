import EventWire
import LyceumLogging
import Majordomo
import Synchronization
import ZeroMQ

/// The catalog's course and lesson titles for a process without a catalog of its own (`broker`):
/// asked of the catalog service through a broker (`list_courses`, then `get_course` for each
/// course's lessons), at most every ``refreshInterval``, and kept when an attempt fails (no
/// catalog worker yet), so a dashboard shows ids only until one answers.
public final class CatalogTitleCache: Sendable {
    /// How long titles are kept before they are asked for again (a worker's catalog may reload).
    static let refreshInterval = Duration.seconds(30)

    private struct State {
        let client: Client
        var titles: [CourseTitle] = []
        var fetched: ContinuousClock.Instant?
    }

    private let state: Mutex<State>
    private let logger = Logger(component: "dashboard")

    /// A cache asking the broker at `broker`, connecting with `security`; nothing is sent
    /// before the first ``titles()``.
    public init(broker: String, security: SocketSecurity, context: Context) {
        let configuration = ClientConfiguration(timeout: .seconds(1), attempts: 1, security: security)
        state = Mutex(State(client: Client(endpoint: broker, configuration: configuration, context: context)))
    }

    /// The titles, fetched first when they are older than ``refreshInterval``. Blocks for up
    /// to the client's timeout then; call it from one thread (the client's socket is that thread's).
    public func titles() -> [CourseTitle] {
        state.withLock { state in
            let now = ContinuousClock.now
            if let fetched = state.fetched, now - fetched < Self.refreshInterval { return state.titles }
            state.fetched = now
            let client = state.client
            do {
                state.titles = try CatalogTitles.fetch(lessons: true) { request in try client.call("catalog", body: [request]).first ?? [] }
            } catch {
                logger.warning("no course titles from the catalog service yet; the dashboard shows ids", ["error": "\(error)"])
            }
            return state.titles
        }
    }
}
