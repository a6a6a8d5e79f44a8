import JSON
import ZeroMQ

/// A progress summary as events and snapshots carry it (protocol/events.md, `progress`).
public struct PublishedProgress: Sendable, Equatable {
    /// The course's id.
    public let course: String
    /// Watched lessons the course still has.
    public let watchedCount: Int
    /// Lessons the course has.
    public let lessonCount: Int
    /// Whole percentage watched, rounded down.
    public let percent: Int
    /// The lesson the learner is on.
    public let currentLesson: String?
    /// Whether every lesson is watched.
    public let completed: Bool
    /// The best quiz attempt as correct answers and questions, if any.
    public let bestScore: (score: Int, total: Int)?
    /// RFC 3339 time of the last change.
    public let updatedAt: String

    init(_ reader: inout JSONObjectReader) throws(JSONReadError) {
        course = try reader.string("course")
        watchedCount = try reader.integer("watched_count", in: 0...Int.max)
        lessonCount = try reader.integer("lesson_count", in: 0...Int.max)
        percent = try reader.integer("percent", in: 0...100)
        currentLesson = try reader.optionalString("current_lesson")
        completed = try reader.boolean("completed")
        if var best = try reader.optionalObject("best_score") {
            bestScore = (try best.integer("score", in: 0...Int.max), try best.integer("total", in: 0...Int.max))
        } else {
            bestScore = nil
        }
        updatedAt = try reader.string("updated_at")
    }

    /// Compares every field.
    public static func == (lhs: PublishedProgress, rhs: PublishedProgress) -> Bool {
        lhs.course == rhs.course && lhs.watchedCount == rhs.watchedCount && lhs.lessonCount == rhs.lessonCount
            && lhs.percent == rhs.percent && lhs.currentLesson == rhs.currentLesson && lhs.completed == rhs.completed
            && lhs.bestScore?.score == rhs.bestScore?.score && lhs.bestScore?.total == rhs.bestScore?.total
            && lhs.updatedAt == rhs.updatedAt
    }
}

/// A progress event as received: the decoded members and the body exactly as published.
public struct ReceivedProgressEvent: Sendable {
    /// The topic frame.
    public let topic: String
    /// The source's sequence number, among all its events.
    public let sequence: UInt64
    /// The source's sequence number among its progress events.
    public let progressSequence: UInt64
    /// The source's identity.
    public let source: String
    /// The source's sequence number within the event's course.
    public let courseSequence: UInt64
    /// The journal position of the write, ordering one learner's events in one course.
    public let revision: UInt64
    /// The event type, e.g. `lesson_watched`.
    public let type: String
    /// The learner's id.
    public let learner: String
    /// The course's id.
    public let course: String
    /// The lesson concerned, for lesson events.
    public let lesson: String?
    /// RFC 3339 time of the write.
    public let time: String
    /// The learner's progress in the course after the write.
    public let progress: PublishedProgress
    /// Whether this write completed the course.
    public let completesCourse: Bool
    /// The submitted attempt's score, for `quiz_submitted`.
    public let quiz: (score: Int, total: Int)?
    /// The JSON body as published.
    public let body: [UInt8]

    /// Decodes a body received under `topic`.
    public init(topic: String, body: [UInt8]) throws(EventsError) {
        self.topic = topic
        self.body = body
        do throws(JSONReadError) {
            var reader = try decodeObject(body)
            sequence = try reader.counter("seq")
            progressSequence = try reader.counter("progress_seq")
            source = try reader.string("source")
            courseSequence = try reader.counter("course_seq")
            revision = try reader.counter("revision")
            type = try reader.string("type")
            learner = try reader.string("learner")
            course = try reader.string("course")
            lesson = try reader.optionalString("lesson")
            time = try reader.string("time")
            var progressReader = try reader.object("progress")
            progress = try PublishedProgress(&progressReader)
            completesCourse = try reader.boolean("completes_course")
            if var quizReader = try reader.optionalObject("quiz") {
                quiz = (try quizReader.integer("score", in: 0...Int.max), try quizReader.integer("total", in: 0...Int.max))
            } else {
                quiz = nil
            }
        } catch {
            throw EventsError(.malformed, "progress event on \(topic): \(error)")
        }
    }
}

/// A heartbeat as received.
public struct ReceivedHeartbeat: Sendable, Equatable {
    /// The source's identity.
    public let source: String
    /// The source's last sequence number, among all its events.
    public let sequence: UInt64
    /// The source's last sequence number among its progress events.
    public let progressSequence: UInt64
    /// The source's last sequence number among its book events.
    public let booksSequence: UInt64
    /// The source's last sequence number per course.
    public let courseSequences: [String: UInt64]
    /// Where the source answers snapshot requests, if it says.
    public let snapshotEndpoint: String?
    /// The CURVE public key of the snapshot endpoint (32 bytes), when it is a CURVE server:
    /// a subscriber connects to it as a CURVE client of this key (heartbeat schema 2).
    public let snapshotKey: [UInt8]?

    /// Decodes a heartbeat body.
    public init(body: [UInt8]) throws(EventsError) {
        do throws(JSONReadError) {
            var reader = try decodeObject(body)
            source = try reader.string("source")
            sequence = try reader.counter("seq")
            progressSequence = try reader.counter("progress_seq")
            booksSequence = try reader.counter("books_seq")
            courseSequences = try reader.counters("course_seq")
            snapshotEndpoint = try reader.optionalString("snapshot")
            snapshotKey = try Self.curveKey(reader.optionalString("snapshot_key", length: 40...40))
        } catch {
            throw EventsError(.malformed, "heartbeat: \(error)")
        }
    }

    /// The 32 bytes of a key's Z85 text; `nil` for none.
    private static func curveKey(_ text: String?) throws(JSONReadError) -> [UInt8]? {
        guard let text else { return nil }
        guard let key = try? Z85.decode(text), key.count == 32 else {
            throw JSONReadError(path: "$.snapshot_key", message: "not the Z85 text of a CURVE public key")
        }
        return key
    }
}

/// A snapshot reply as received: one page of a snapshot (protocol/events.md, "Pages").
public struct ReceivedSnapshot: Sendable {
    /// One entry of the snapshot.
    public struct Entry: Sendable, Equatable {
        /// The entry's topic.
        public let topic: String
        /// The learner's id.
        public let learner: String
        /// The course's id.
        public let course: String
        /// The journal position of the write that produced it; 0 when loaded at start.
        public let revision: UInt64
        /// The learner's progress in the course.
        public let progress: PublishedProgress
    }

    /// The source's identity.
    public let source: String
    /// The sequence number the snapshot corresponds to, among all the source's events.
    public let sequence: UInt64
    /// The sequence number the snapshot corresponds to, among the source's progress events.
    public let progressSequence: UInt64
    /// The source's last sequence number per course.
    public let courseSequences: [String: UInt64]
    /// The page's entries under the requested prefix, in topic order.
    public private(set) var entries: [Entry]
    /// The cursor that asks for the next page; `nil` on the last page (and from publishers
    /// that do not page, whose one reply is the whole snapshot).
    public private(set) var nextCursor: String?

    /// Decodes a snapshot reply body.
    public init(body: [UInt8]) throws(EventsError) {
        do throws(JSONReadError) {
            var reader = try decodeObject(body)
            source = try reader.string("source")
            sequence = try reader.counter("seq")
            progressSequence = try reader.counter("progress_seq")
            courseSequences = try reader.counters("course_seq")
            var entries: [Entry] = []
            for item in try reader.array("entries") {
                var entry = try JSONObjectReader(item.value, path: item.path)
                var progressReader = try entry.object("progress")
                entries.append(Entry(
                    topic: try entry.string("topic"), learner: try entry.string("learner"), course: try entry.string("course"),
                    revision: try entry.counter("revision"), progress: try PublishedProgress(&progressReader)))
            }
            self.entries = entries
            nextCursor = try reader.optionalString("next_cursor")
        } catch {
            throw EventsError(.malformed, "snapshot: \(error)")
        }
    }

    /// This snapshot with `page`'s entries added and its cursor: the numbers stay this one's,
    /// the first page's, which the catching-up rules keep (protocol/events.md, "Pages").
    func appending(_ page: ReceivedSnapshot) -> ReceivedSnapshot {
        var joined = self
        joined.entries += page.entries
        joined.nextCursor = page.nextCursor
        return joined
    }
}

/// A book event as received: the decoded members and the body exactly as published.
public struct ReceivedBookEvent: Sendable {
    /// A book as book events carry it: the `books` service's representation.
    public struct Book: Sendable, Equatable {
        /// The book's id.
        public let id: String
        /// Its title.
        public let title: String
        /// Its author.
        public let author: String
        /// Its genre's wire spelling, e.g. `Fantasy`.
        public let genre: String
        /// Stars, 1 through 5.
        public let rating: Int
        /// The learner's review, possibly empty.
        public let review: String
        /// 1 on creation, +1 on each update.
        public let version: Int
        /// RFC 3339 time of creation.
        public let createdAt: String
        /// RFC 3339 time of the last change.
        public let updatedAt: String
    }

    /// The topic frame.
    public let topic: String
    /// The source's sequence number, among all its events.
    public let sequence: UInt64
    /// The source's sequence number among its book events.
    public let booksSequence: UInt64
    /// The source's identity.
    public let source: String
    /// The journal position of the write.
    public let revision: UInt64
    /// The event type: `book_created`, `book_updated` or `book_deleted`.
    public let type: String
    /// Whose library changed.
    public let learner: String
    /// The book concerned.
    public let bookID: String
    /// The book after the change; `nil` for a deletion.
    public let book: Book?
    /// RFC 3339 time of the change.
    public let time: String
    /// The JSON body as published.
    public let body: [UInt8]

    /// Decodes a body received under `topic`.
    public init(topic: String, body: [UInt8]) throws(EventsError) {
        self.topic = topic
        self.body = body
        do throws(JSONReadError) {
            var reader = try decodeObject(body)
            sequence = try reader.counter("seq")
            booksSequence = try reader.counter("books_seq")
            source = try reader.string("source")
            revision = try reader.counter("revision")
            type = try reader.string("type")
            learner = try reader.string("learner")
            bookID = try reader.string("book_id")
            if var bookReader = try reader.optionalObject("book") {
                book = Book(
                    id: try bookReader.string("id"), title: try bookReader.string("title"), author: try bookReader.string("author"),
                    genre: try bookReader.string("genre"), rating: try bookReader.integer("rating", in: 1...5),
                    review: try bookReader.string("review"), version: try bookReader.integer("version", in: 1...Int.max),
                    createdAt: try bookReader.string("created_at"), updatedAt: try bookReader.string("updated_at"))
            } else {
                book = nil
            }
            time = try reader.string("time")
        } catch {
            throw EventsError(.malformed, "book event on \(topic): \(error)")
        }
    }
}

/// Parses `body` as a JSON object; a parse failure is reported as a read error at `$`.
func decodeObject(_ body: [UInt8]) throws(JSONReadError) -> JSONObjectReader {
    let value: JSONValue
    do throws(JSONParseError) {
        value = try JSONParser(maxBytes: 64 << 20).parse(body)
    } catch {
        throw JSONReadError(path: "$", message: "not JSON: \(error)")
    }
    return try JSONObjectReader(value)
}

extension JSONObjectReader {
    /// A required boolean member.
    fileprivate mutating func boolean(_ key: String) throws(JSONReadError) -> Bool {
        guard case .bool(let flag) = try value(key) else {
            throw JSONReadError(path: path(of: key), message: "expected a boolean")
        }
        return flag
    }

    /// A required non-negative integer member.
    fileprivate mutating func counter(_ key: String) throws(JSONReadError) -> UInt64 {
        UInt64(try integer(key, in: 0...Int.max))
    }

    /// A required object of non-negative integers.
    fileprivate mutating func counters(_ key: String) throws(JSONReadError) -> [String: UInt64] {
        let object = try self.object(key)
        var counters: [String: UInt64] = [:]
        for member in object.object {
            guard case .integer(let count) = member.value, count >= 0 else {
                throw JSONReadError(path: object.path(of: member.key), message: "expected a non-negative integer")
            }
            counters[member.key] = UInt64(count)
        }
        return counters
    }
}
