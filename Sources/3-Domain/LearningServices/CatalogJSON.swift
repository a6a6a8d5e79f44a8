import Catalog
import JSON
import LyceumLogging

/// The contract's representations of catalog entities.
extension Course {
    /// A course without its lessons, as lists show it.
    var summaryJSON: JSONValue {
        [
            "id": .string(id), "title": .string(title), "category": JSONValue(category), "description": JSONValue(description),
            "image": JSONValue(image), "time": JSONValue(time), "total_seconds": JSONValue(totalSeconds),
            "lesson_count": .integer(lessons.count), "question_count": .integer(quiz?.questions.count ?? 0),
        ]
    }

    /// A course with its lessons (without explanations).
    var detailJSON: JSONValue {
        guard case .object(var object) = summaryJSON else { return summaryJSON }
        object.append("lessons", .array(lessons.map(\.summaryJSON)))
        return .object(object)
    }
}

extension Lesson {
    var summaryJSON: JSONValue {
        [
            "id": .string(id), "title": .string(title), "video": JSONValue(video), "thumbnail": JSONValue(thumbnail),
            "duration": JSONValue(duration), "duration_seconds": JSONValue(durationSeconds),
        ]
    }
}

extension Quiz {
    /// The quiz as learners see it: no correct answers.
    func learnerJSON(course: String) -> JSONValue {
        [
            "course": .string(course), "description": JSONValue(description), "image": JSONValue(image), "time": JSONValue(time),
            "questions": .array(questions.map { ["id": .string($0.id), "content": .string($0.content), "answers": .array($0.answers.map(JSONValue.string))] }),
        ]
    }
}

extension Catalog {
    /// The course named by `$.course`, or `not_found`.
    func existingCourse(_ id: String) throws(ServiceError) -> Course {
        guard let course = course(id) else { throw ServiceError(.notFound, "no course \(PeerText.excerpt(id)) in the catalog", field: "$.course") }
        return course
    }
}

extension Course {
    /// The position of the lesson named by `$.lesson`, or `not_found`.
    func existingLessonIndex(_ id: String) throws(ServiceError) -> Int {
        guard let index = lessonIndex(id) else {
            throw ServiceError(.notFound, "course \(self.id) has no lesson \(PeerText.excerpt(id))", field: "$.lesson")
        }
        return index
    }
}
