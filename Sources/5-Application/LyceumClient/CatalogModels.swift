import JSON

/// A course without its lessons, as catalog lists and search hits carry it.
public struct CourseSummary: Equatable, Sendable {
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
public struct LessonSummary: Equatable, Sendable {
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
public struct Course: Equatable, Sendable {
    /// What lists and search hits carry of the course.
    public let summary: CourseSummary
    /// Its lessons in order.
    public let lessons: [LessonSummary]

    /// A member of the summary.
    public subscript<Value>(dynamicMember member: KeyPath<CourseSummary, Value>) -> Value { summary[keyPath: member] }

}

/// One lesson with its place in the course (`catalog get_lesson`): the members a course lists
/// (`lesson.title`) and the rest.
@dynamicMemberLookup
public struct Lesson: Equatable, Sendable {
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
}

/// A course's quiz, without the correct answers (`catalog get_quiz`).
public struct Quiz: Equatable, Sendable {
    /// One question and its choices.
    public struct Question: Equatable, Sendable {
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
public struct Category: Equatable, Sendable {
    /// The category's name.
    public let name: String
    /// Its courses.
    public let courseCount: Int
}

/// One page of courses.
public struct CoursePage: Equatable, Sendable {
    /// The courses of this page, in catalog order.
    public let courses: [CourseSummary]
    /// The cursor of the next page; `nil` on the last.
    public let nextCursor: String?
}

/// One page of search hits, best first.
public struct SearchPage: Equatable, Sendable {
    /// A course that matches every word of the query.
    public struct Hit: Equatable, Sendable {
        /// A lesson whose title matches.
        public struct MatchingLesson: Equatable, Sendable {
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

extension CourseSummary: ReplyResult {
    init(reply: inout JSONObjectReader) throws(JSONReadError) {
        id = try reply.string("id")
        title = try reply.string("title")
        category = try reply.optionalString("category")
        description = try reply.optionalString("description")
        image = try reply.optionalString("image")
        time = try reply.optionalString("time")
        totalSeconds = try reply.optionalInteger("total_seconds")
        lessonCount = try reply.integer("lesson_count")
        questionCount = try reply.integer("question_count")
    }
}

extension LessonSummary: ReplyResult {
    init(reply: inout JSONObjectReader) throws(JSONReadError) {
        id = try reply.string("id")
        title = try reply.string("title")
        video = try reply.optionalString("video")
        thumbnail = try reply.optionalString("thumbnail")
        duration = try reply.optionalString("duration")
        durationSeconds = try reply.optionalInteger("duration_seconds")
    }
}

extension Course: ReplyResult {
    /// The summary's members and `lessons` share one JSON object.
    init(reply: inout JSONObjectReader) throws(JSONReadError) {
        summary = try CourseSummary(reply: &reply)
        lessons = try reply.results("lessons")
    }
}

extension Lesson: ReplyResult {
    /// The summary's members and the lesson's own share one JSON object.
    init(reply: inout JSONObjectReader) throws(JSONReadError) {
        summary = try LessonSummary(reply: &reply)
        explanation = try reply.optionalString("explanation")
        course = try reply.string("course")
        position = try reply.integer("position")
        previous = try reply.optionalString("previous")
        next = try reply.optionalString("next")
    }
}

extension Quiz.Question: ReplyResult {
    init(reply: inout JSONObjectReader) throws(JSONReadError) {
        id = try reply.string("id")
        content = try reply.string("content")
        answers = try reply.strings("answers")
    }
}

extension Quiz: ReplyResult {
    init(reply: inout JSONObjectReader) throws(JSONReadError) {
        course = try reply.string("course")
        description = try reply.optionalString("description")
        image = try reply.optionalString("image")
        time = try reply.optionalString("time")
        questions = try reply.results("questions")
    }
}

extension Category: ReplyResult {
    init(reply: inout JSONObjectReader) throws(JSONReadError) {
        name = try reply.string("name")
        courseCount = try reply.integer("course_count")
    }
}

extension CoursePage: ReplyResult {
    init(reply: inout JSONObjectReader) throws(JSONReadError) {
        courses = try reply.results("courses")
        nextCursor = try reply.optionalString("next_cursor")
    }
}

extension SearchPage.Hit.MatchingLesson: ReplyResult {
    init(reply: inout JSONObjectReader) throws(JSONReadError) {
        id = try reply.string("id")
        title = try reply.string("title")
    }
}

extension SearchPage.Hit: ReplyResult {
    init(reply: inout JSONObjectReader) throws(JSONReadError) {
        course = try reply.result("course")
        score = try reply.integer("score")
        lessons = try reply.results("lessons")
    }
}

extension SearchPage: ReplyResult {
    init(reply: inout JSONObjectReader) throws(JSONReadError) {
        hits = try reply.results("hits")
        nextCursor = try reply.optionalString("next_cursor")
    }
}

/// The result of `get_course`: `{"course": …}`.
struct CourseResult: ReplyResult {
    let course: Course
    init(reply: inout JSONObjectReader) throws(JSONReadError) { course = try reply.result("course") }
}

/// The result of `get_lesson`: `{"lesson": …}`.
struct LessonResult: ReplyResult {
    let lesson: Lesson
    init(reply: inout JSONObjectReader) throws(JSONReadError) { lesson = try reply.result("lesson") }
}

/// The result of `get_quiz`: `{"quiz": …}`.
struct QuizResultBody: ReplyResult {
    let quiz: Quiz
    init(reply: inout JSONObjectReader) throws(JSONReadError) { quiz = try reply.result("quiz") }
}

/// The result of `list_categories`: `{"categories": […]}`.
struct CategoriesResult: ReplyResult {
    let categories: [Category]
    init(reply: inout JSONObjectReader) throws(JSONReadError) { categories = try reply.results("categories") }
}
