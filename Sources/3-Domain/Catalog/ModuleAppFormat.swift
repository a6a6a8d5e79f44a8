import JSON

/// The module app's `data.json`. A module becomes a course titled by its category; its
/// `content.lessons` become lessons and its `test` the quiz. Source ids are kept when they are
/// valid ids, else derived; fields the app does not know are ignored.
enum ModuleAppFormat {
    static func courses(_ elements: [JSONValue]) throws(JSONReadError) -> [Course] {
        var courseIDs: Set<String> = []
        var courses: [Course] = []
        for (index, element) in elements.enumerated() {
            var module = try JSONObjectReader(element, path: "$[\(index)]")
            let sourceID = try module.sourceID("id")
            let id = StableID.isValid(sourceID) ? sourceID : StableID.slug(sourceID)
            guard courseIDs.insert(id).inserted else { throw JSONReadError(path: module.path(of: "id"), message: "repeats id \(id)") }
            let category = try module.text("category")
            var content = try module.object("content")
            var lessonIDs: Set<String> = []
            var lessons: [Lesson] = []
            for item in try content.array("lessons") {
                var lesson = try JSONObjectReader(item.value, path: item.path)
                let lessonSourceID = try lesson.sourceID("id")
                let lessonID = StableID.isValid(lessonSourceID) ? lessonSourceID : StableID.slug(lessonSourceID)
                guard lessonIDs.insert(lessonID).inserted else {
                    throw JSONReadError(path: lesson.path(of: "id"), message: "repeats lesson id \(lessonID)")
                }
                lessons.append(Lesson(
                    id: lessonID, title: try lesson.text("title"), video: try lesson.optionalString("video"), thumbnail: nil,
                    duration: try lesson.optionalString("duration"), explanation: try lesson.optionalString("explanation")))
            }
            let quiz = try module.optionalObject("test").map { (test) throws(JSONReadError) in try self.quiz(test) }
            courses.append(Course(
                id: id, title: category, category: category, description: try content.optionalString("description"),
                image: try content.optionalString("image"), time: try content.optionalString("time"), lessons: lessons,
                quiz: quiz.flatMap { $0.questions.isEmpty ? nil : $0 }))
        }
        return courses
    }

    private static func quiz(_ reader: JSONObjectReader) throws(JSONReadError) -> Quiz {
        var test = reader
        var questionIDs: Set<String> = []
        var questions: [Question] = []
        for item in try test.array("questions") {
            var question = try JSONObjectReader(item.value, path: item.path)
            let id = try question.sourceID("id")
            guard questionIDs.insert(id).inserted else { throw JSONReadError(path: question.path(of: "id"), message: "repeats question id \(id)") }
            let content = try question.text("content")
            let answers = try question.array("answers")
            var texts: [String] = []
            for answer in answers {
                guard case .string(let text) = answer.value else {
                    throw JSONReadError(path: answer.path, message: "expected a string, found \(answer.value.typeName)")
                }
                texts.append(text)
            }
            guard texts.count >= 2 else { throw JSONReadError(path: question.path(of: "answers"), message: "needs at least 2 answers") }
            let correct = try question.integer("correctIndex", in: 0...(texts.count - 1))
            questions.append(Question(id: id, content: content, answers: texts, correctIndex: correct))
        }
        return Quiz(
            description: try test.optionalString("description"), image: try test.optionalString("image"),
            time: try test.optionalString("time"), questions: questions)
    }
}
