/// One course of the catalog: a module of the module app, a course of the course app, or a
/// course of a Lyceum catalog file.
public struct Course: Sendable, Equatable {
    /// Stable id, unique in the catalog; derived from the name when the source has none.
    public let id: String
    /// Display title.
    public let title: String
    /// The module app's category; `nil` for sources without one.
    public let category: String?
    /// Longer text about the course.
    public let description: String?
    /// Image or thumbnail URL.
    public let image: String?
    /// The source's own statement of the course length, e.g. "3 Hours".
    public let time: String?
    /// Lessons in course order.
    public let lessons: [Lesson]
    /// The course's test, if it has one.
    public let quiz: Quiz?
    /// Seconds of the course: the sum of the lesson durations that are known, else the stated
    /// `time`, else `nil`.
    public let totalSeconds: Int?

    /// A course with these fields; `totalSeconds` is derived.
    public init(
        id: String, title: String, category: String?, description: String?, image: String?, time: String?,
        lessons: [Lesson], quiz: Quiz?
    ) {
        self.id = id
        self.title = title
        self.category = category
        self.description = description
        self.image = image
        self.time = time
        self.lessons = lessons
        self.quiz = quiz
        let known = lessons.compactMap(\.durationSeconds)
        totalSeconds = known.isEmpty ? time.flatMap(DurationText.seconds) : known.reduce(0, +)
    }

    /// The position of lesson `id` in `lessons`.
    public func lessonIndex(_ id: String) -> Int? { lessons.firstIndex { $0.id == id } }
}

/// One lesson (a video) of a course.
public struct Lesson: Sendable, Equatable {
    /// Stable id, unique within its course.
    public let id: String
    /// Display title.
    public let title: String
    /// Video URL.
    public let video: String?
    /// Thumbnail image URL.
    public let thumbnail: String?
    /// The source's own duration text, e.g. "12:30" or "15 min".
    public let duration: String?
    /// The lesson's text.
    public let explanation: String?
    /// `duration` in seconds when it can be read.
    public let durationSeconds: Int?

    /// A lesson with these fields; `durationSeconds` is derived.
    public init(id: String, title: String, video: String?, thumbnail: String?, duration: String?, explanation: String?) {
        self.id = id
        self.title = title
        self.video = video
        self.thumbnail = thumbnail
        self.duration = duration
        self.explanation = explanation
        durationSeconds = duration.flatMap(DurationText.seconds)
    }
}

/// A course's test: multiple-choice questions with one correct answer each.
public struct Quiz: Sendable, Equatable {
    /// Text shown before the quiz.
    public let description: String?
    /// Image URL.
    public let image: String?
    /// The source's own statement of its length, e.g. "10 Minutes".
    public let time: String?
    /// Questions in quiz order.
    public let questions: [Question]

    /// A quiz with these fields.
    public init(description: String?, image: String?, time: String?, questions: [Question]) {
        self.description = description
        self.image = image
        self.time = time
        self.questions = questions
    }
}

/// One multiple-choice question.
public struct Question: Sendable, Equatable {
    /// Stable id, unique within its quiz.
    public let id: String
    /// The question text.
    public let content: String
    /// The choices, at least two.
    public let answers: [String]
    /// Index into `answers` of the correct one; never sent to learners.
    public let correctIndex: Int

    /// A question with these fields.
    public init(id: String, content: String, answers: [String], correctIndex: Int) {
        self.id = id
        self.content = content
        self.answers = answers
        self.correctIndex = correctIndex
    }
}
