// docs/clients.md's Swift example: a book, some progress, a search, and the
// progress event that the write produced. Run it against `lyceum serve`:
//
//     swift run SwiftClientExample [broker] [events] [snapshots]
//
// (defaults tcp://127.0.0.1:5555, :5556, :5557, serve's own defaults).
import LyceumClient

@main
struct SwiftClientExample {
    static func main() async throws {
        let arguments = CommandLine.arguments.dropFirst()
        let endpoints = Array(arguments) + ["tcp://127.0.0.1:5555", "tcp://127.0.0.1:5556", "tcp://127.0.0.1:5557"].dropFirst(arguments.count)

        let lyceum = try LyceumClient(configuration: LyceumClientConfiguration(
            brokers: [endpoints[0]],
            timeout: .seconds(2), attempts: 3,
            events: .init(events: endpoints[1], snapshot: endpoints[2])))
        defer { lyceum.close() }

        // Subscribe first, and wait until the subscription is live (its first snapshot is loaded,
        // on the publisher's first heartbeat): a subscription reaches the publisher a moment
        // after it is made, and an event published before that is only in the next snapshot.
        var updates = try lyceum.progressEvents(course: "swiftui-essentials").makeAsyncIterator()
        while let update = try await updates.next() {
            if case .synchronized = update { break }
        }

        let book = try await lyceum.books.create(learner: "ada", title: "Dune", author: "Frank Herbert", genre: .fantasy, rating: 5)
        print("created \(book.title) (version \(book.version))")

        let hits = try await lyceum.catalog.search("swiftui")
        print("search: \(hits.hits.map(\.course.title))")

        let progress = try await lyceum.progress.markWatched(learner: "ada", course: "swiftui-essentials", lesson: "state-and-binding")
        print("progress: \(progress.percent)% of \(progress.course)")

        do {
            _ = try await lyceum.books.get(learner: "ada", id: "no-such-book")
        } catch {
            // Typed throws: `error` is a LyceumError; switch on its code.
            guard error.code == .notFound else { throw error }
            print("not found: \(error.message)")
        }

        while let update = try await updates.next() {
            if case .event(let event) = update, event.learner == "ada" {
                print("event: \(event.type) \(event.course)/\(event.lesson ?? "-")")
                break
            }
        }
    }
}
