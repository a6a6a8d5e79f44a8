import JSON

/// Lyceum's own catalog format, documented in `protocol/README.md`:
/// `{"format": "lyceum-catalog", "version": 1, "courses": [{"id", "title", "category"?,
/// "description"?, "image"?, "time"?, "lessons": [{"id", "title", "video"?, "thumbnail"?,
/// "duration"?, "explanation"?}], "quiz"?: {"description"?, "image"?, "time"?, "questions":
/// [{"id", "content", "answers", "correct_index"}]}}]}`. Strict: ids are required and valid,
/// and unknown fields are refused, so that typos surface at load time.
enum LyceumCatalogFormat {
    static let formatName = "lyceum-catalog"
    static let version = 1

    static func courses(_ document: JSONValue) throws(JSONReadError) -> [Course] {
        var root = try JSONObjectReader(document)
        guard try root.string("format") == formatName else {
            throw JSONReadError(path: "$.format", message: "must be \"\(formatName)\"")
        }
        guard try root.integer("version") == version else {
            throw JSONReadError(path: "$.version", message: "must be \(version), the version this server reads")
        }
        var courseIDs: Set<String> = []
        var courses: [Course] = []
        for item in try root.array("courses") {
            var course = try JSONObjectReader(item.value, path: item.path)
            let id = try identifier(&course, unique: &courseIDs)
            let title = try course.text("title")
            let category = try course.optionalString("category", length: 1...200)
            let description = try course.optionalString("description")
            let image = try course.optionalString("image")
            let time = try course.optionalString("time")
            var lessonIDs: Set<String> = []
            var lessons: [Lesson] = []
            for lessonItem in try course.array("lessons") {
                var lesson = try JSONObjectReader(lessonItem.value, path: lessonItem.path)
                lessons.append(Lesson(
                    id: try identifier(&lesson, unique: &lessonIDs), title: try lesson.text("title"),
                    video: try lesson.optionalString("video"), thumbnail: try lesson.optionalString("thumbnail"),
                    duration: try lesson.optionalString("duration"), explanation: try lesson.optionalString("explanation")))
                try lesson.rejectUnknownMembers()
            }
            let quiz = try course.optionalObject("quiz").map { (reader) throws(JSONReadError) in try self.quiz(reader) }
            try course.rejectUnknownMembers()
            courses.append(Course(
                id: id, title: title, category: category, description: description, image: image, time: time,
                lessons: lessons, quiz: quiz))
        }
        try root.rejectUnknownMembers()
        return courses
    }

    private static func quiz(_ reader: JSONObjectReader) throws(JSONReadError) -> Quiz {
        var quiz = reader
        let description = try quiz.optionalString("description")
        let image = try quiz.optionalString("image")
        let time = try quiz.optionalString("time")
        var questionIDs: Set<String> = []
        var questions: [Question] = []
        for item in try quiz.array("questions") {
            var question = try JSONObjectReader(item.value, path: item.path)
            let id = try identifier(&question, unique: &questionIDs)
            let content = try question.text("content")
            var answers: [String] = []
            for answer in try question.array("answers") {
                guard case .string(let text) = answer.value, !text.isEmpty else {
                    throw JSONReadError(path: answer.path, message: "expected a non-empty string")
                }
                answers.append(text)
            }
            guard answers.count >= 2 else { throw JSONReadError(path: question.path(of: "answers"), message: "needs at least 2 answers") }
            let correct = try question.integer("correct_index", in: 0...(answers.count - 1))
            try question.rejectUnknownMembers()
            questions.append(Question(id: id, content: content, answers: answers, correctIndex: correct))
        }
        guard !questions.isEmpty else { throw JSONReadError(path: quiz.path(of: "questions"), message: "needs at least 1 question") }
        try quiz.rejectUnknownMembers()
        return Quiz(description: description, image: image, time: time, questions: questions)
    }

    private static func identifier(_ reader: inout JSONObjectReader, unique taken: inout Set<String>) throws(JSONReadError) -> String {
        let id = try reader.string("id")
        guard StableID.isValid(id) else {
            throw JSONReadError(path: reader.path(of: "id"), message: "must be 1–64 letters, digits, '.', '_' or '-', starting with a letter or digit")
        }
        guard taken.insert(id).inserted else { throw JSONReadError(path: reader.path(of: "id"), message: "repeats id \(id)") }
        return id
    }
}
