import LyceumSupport
import JSON

/// What the server holds before the measured run starts: the catalog as discovered through
/// the wire protocol, and the books this client created for its learners. Shared read-only by
/// every connection.
public struct Workload: Sendable {
    /// A course as `list_courses` and `get_course` describe it.
    public struct Course: Sendable, Equatable {
        /// The course id.
        public let id: String
        /// Its lessons' ids in course order.
        public let lessonIDs: [String]
        /// Questions in its quiz; 0 when it has none.
        public let questionCount: Int
    }

    /// A book created during setup, with the members that reads must return unchanged.
    public struct Book: Sendable, Equatable {
        /// The learner who owns it.
        public let learner: String
        /// The id the server assigned.
        public let id: String
        /// The title as sent; updates in a run never change it.
        public let title: String
        /// The author as sent; updates in a run never change it.
        public let author: String
        /// The genre as sent; updates in a run never change it.
        public let genre: String
    }

    /// The catalog's courses.
    public let courses: [Course]
    /// Books to read and update.
    public let books: [Book]
    /// Synthetic learners, `bench-<seed>-<n>`.
    public let learners: [String]
    /// The seed everything was generated from.
    public let seed: UInt64
    /// For `book-list` with a ``BookListing/page`` past the first: the cursor to that page of
    /// each learner's library, found in setup.
    public let pageCursors: [String: String]

    /// Learner names for `seed`; distinct seeds never share learners, so runs do not collide.
    public static func learners(count: Int, seed: UInt64) -> [String] {
        (0..<max(1, count)).map { "bench-\(seed)-\($0)" }
    }

    /// A workload from parts already known; used when nothing needs to be discovered.
    public init(courses: [Course], books: [Book], learners: [String], seed: UInt64, pageCursors: [String: String] = [:]) {
        self.courses = courses
        self.books = books
        self.learners = learners
        self.seed = seed
        self.pageCursors = pageCursors
    }

    static let genres = ["Fantasy", "Horror", "Kids", "Mystery", "Poetry", "Romance", "Thriller"]
    private static let words = ["Silent", "River", "Glass", "Empire", "Winter", "Garden", "Stone", "Light",
                                "Harbor", "Clock", "Shadow", "Paper", "Ember", "Orchard", "Signal", "Tide"]
    private static let names = ["Ada Byron", "Grace Hopper", "Alan Kay", "Edsger Dijkstra", "Barbara Liskov",
                                "Donald Knuth", "Frances Allen", "Leslie Lamport"]

    /// A synthetic book's title, author, genre, rating and review; ~200 bytes on the wire.
    static func syntheticBook(using generator: inout SeededGenerator) -> (title: String, author: String, genre: String, rating: Int, review: String) {
        let title = "The \(words.randomElement(using: &generator)!) \(words.randomElement(using: &generator)!) \(Int.random(in: 1...9999, using: &generator))"
        let author = names.randomElement(using: &generator)!
        let genre = genres.randomElement(using: &generator)!
        let rating = Int.random(in: 1...5, using: &generator)
        let review = "A \(words.randomElement(using: &generator)!.lowercased()) read; \(Int.random(in: 1...999, using: &generator)) pages of \(words.randomElement(using: &generator)!.lowercased())."
        return (title, author, genre, rating, review)
    }
}
