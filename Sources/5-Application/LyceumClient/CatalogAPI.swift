/// The `catalog` service, read-only (protocol/README.md, "Service `catalog`").
public struct CatalogAPI: Sendable {
    let caller: RequestSender

    /// One page of courses in catalog order, of one `category` when given.
    public func listCourses(category: String? = nil, limit: Int? = nil, cursor: String? = nil) async throws(LyceumError) -> CoursePage {
        try await caller.call("catalog", "list_courses", ["category": category.parameter, "limit": limit.parameter, "cursor": cursor.parameter])
    }

    /// A course with its lessons. - Throws: ``LyceumError/Code/notFound``.
    public func getCourse(_ course: String) async throws(LyceumError) -> Course {
        try await caller.call("catalog", "get_course", ["course": .string(course)], as: CourseResult.self).course
    }

    /// A lesson with its place in the course. - Throws: ``LyceumError/Code/notFound``.
    public func getLesson(course: String, lesson: String) async throws(LyceumError) -> Lesson {
        try await caller.call("catalog", "get_lesson", ["course": .string(course), "lesson": .string(lesson)], as: LessonResult.self).lesson
    }

    /// A course's quiz without the correct answers. - Throws: ``LyceumError/Code/notFound``
    /// also when the course has no quiz.
    public func getQuiz(course: String) async throws(LyceumError) -> Quiz {
        try await caller.call("catalog", "get_quiz", ["course": .string(course)], as: QuizResultBody.self).quiz
    }

    /// Courses matching every word of `query`, best first, one page at a time.
    public func search(_ query: String, limit: Int? = nil, cursor: String? = nil) async throws(LyceumError) -> SearchPage {
        try await caller.call("catalog", "search", ["query": .string(query), "limit": limit.parameter, "cursor": cursor.parameter])
    }

    /// Every category with its number of courses, by name.
    public func listCategories() async throws(LyceumError) -> [Category] {
        try await caller.call("catalog", "list_categories", as: CategoriesResult.self).categories
    }
}
