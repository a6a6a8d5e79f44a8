/// A course without its lessons, as catalog lists and search hits carry it.
public struct CourseSummary: Decodable, Equatable, Sendable {
    /// The course's id.
    public let id: String
    /// Its title.
    public let title: String
    /// Its category, for sources that have them.
    public let category: String?
    /// Its description.
    public let description: String?
    /// An image URL.
    public let image: String?
    /// The source's own duration text, e.g. "3 Hours".
    public let time: String?
    /// The total duration in seconds, when it can be read.
    public let totalSeconds: Int?
    /// How many lessons it has.
    public let lessonCount: Int
    /// How many quiz questions it has.
    public let questionCount: Int
}

/// A lesson as a course lists it.
public struct LessonSummary: Decodable, Equatable, Sendable {
    /// The lesson's id.
    public let id: String
    /// Its title.
    public let title: String
    /// A video URL.
    public let video: String?
    /// A thumbnail URL.
    public let thumbnail: String?
    /// The source's duration text.
    public let duration: String?
    /// The duration in seconds, when it can be read.
    public let durationSeconds: Int?
}

/// A course with its lessons (`catalog get_course`): its summary's members (`course.title`) and
/// the lessons.
@dynamicMemberLookup
public struct Course: Decodable, Equatable, Sendable {
    /// What lists and search hits carry of the course.
    public let summary: CourseSummary
    /// Its lessons in order.
    public let lessons: [LessonSummary]

    /// A member of the summary.
    public subscript<Value>(dynamicMember member: KeyPath<CourseSummary, Value>) -> Value { summary[keyPath: member] }

    private enum Keys: String, CodingKey { case lessons }

    /// Reads the summary's members and `lessons` from one JSON object.
    public init(from decoder: any Decoder) throws {
        summary = try CourseSummary(from: decoder)
        lessons = try decoder.container(keyedBy: Keys.self).decode([LessonSummary].self, forKey: .lessons)
    }
}

/// One lesson with its place in the course (`catalog get_lesson`): the members a course lists
/// (`lesson.title`) and the rest.
@dynamicMemberLookup
public struct Lesson: Decodable, Equatable, Sendable {
    /// What the course lists of the lesson.
    public let summary: LessonSummary
    /// The lesson's text.
    public let explanation: String?
    /// The course's id.
    public let course: String
    /// 1-based position in the course.
    public let position: Int
    /// The previous lesson's id.
    public let previous: String?
    /// The next lesson's id.
    public let next: String?

    /// A member of the summary.
    public subscript<Value>(dynamicMember member: KeyPath<LessonSummary, Value>) -> Value { summary[keyPath: member] }

    private enum Keys: String, CodingKey { case explanation, course, position, previous, next }

    /// Reads the summary's members and the lesson's own from one JSON object.
    public init(from decoder: any Decoder) throws {
        summary = try LessonSummary(from: decoder)
        let container = try decoder.container(keyedBy: Keys.self)
        explanation = try container.decodeIfPresent(String.self, forKey: .explanation)
        course = try container.decode(String.self, forKey: .course)
        position = try container.decode(Int.self, forKey: .position)
        previous = try container.decodeIfPresent(String.self, forKey: .previous)
        next = try container.decodeIfPresent(String.self, forKey: .next)
    }
}

/// A course's quiz, without the correct answers (`catalog get_quiz`).
public struct Quiz: Decodable, Equatable, Sendable {
    /// One question and its choices.
    public struct Question: Decodable, Equatable, Sendable {
        /// The question's id.
        public let id: String
        /// The question.
        public let content: String
        /// The choices; an answer is an index into them.
        public let answers: [String]
    }

    /// The course's id.
    public let course: String
    /// A description.
    public let description: String?
    /// An image URL.
    public let image: String?
    /// The source's duration text.
    public let time: String?
    /// The questions in order.
    public let questions: [Question]
}

/// A category and how many courses it has.
public struct Category: Decodable, Equatable, Sendable {
    /// The category's name.
    public let name: String
    /// Its courses.
    public let courseCount: Int
}

/// One page of courses.
public struct CoursePage: Decodable, Equatable, Sendable {
    /// The courses of this page, in catalog order.
    public let courses: [CourseSummary]
    /// The cursor of the next page; `nil` on the last.
    public let nextCursor: String?
}

/// One page of search hits, best first.
public struct SearchPage: Decodable, Equatable, Sendable {
    /// A course that matches every word of the query.
    public struct Hit: Decodable, Equatable, Sendable {
        /// A lesson whose title matches.
        public struct MatchingLesson: Decodable, Equatable, Sendable {
            /// The lesson's id.
            public let id: String
            /// Its title.
            public let title: String
        }

        /// The course.
        public let course: CourseSummary
        /// Its rank; only the order is meaningful.
        public let score: Int
        /// Its lessons whose titles match.
        public let lessons: [MatchingLesson]
    }

    /// The hits of this page.
    public let hits: [Hit]
    /// The cursor of the next page (it belongs to the query); `nil` on the last.
    public let nextCursor: String?
}

struct CourseResult: Decodable { let course: Course }
struct LessonResult: Decodable { let lesson: Lesson }
struct QuizResultBody: Decodable { let quiz: Quiz }
struct CategoriesResult: Decodable { let categories: [Category] }
