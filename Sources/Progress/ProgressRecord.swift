import JSON

/// The compact JSON object a progress record is journaled as, and the fast path back.
extension CourseProgress {
    /// This record as a journal payload; deterministic (sets and maps in sorted order).
    public func journalValue() -> [UInt8] {
        var positionsObject = JSONObject()
        for (lesson, seconds) in positions.sorted(by: { $0.key < $1.key }) { positionsObject.append(lesson, .double(seconds)) }
        let value: JSONValue = [
            "learner": .string(learner), "course": .string(course),
            "watched": .array(watched.sorted().map(JSONValue.string)), "positions": .object(positionsObject),
            "current": JSONValue(currentLesson), "best": bestAttempt?.journalJSON ?? .null,
            "latest": latestAttempt?.journalJSON ?? .null, "completed": .bool(completed),
            "started_at": .integer(Int(startedAt)), "updated_at": .integer(Int(updatedAt)),
        ]
        return value.serialized()
    }

    /// Decodes a payload written by `journalValue()`; `nil` when it is not one.
    public init?(journalValue bytes: [UInt8]) {
        guard case .success(.object(let object)) = Result(catching: { () throws(JSONParseError) in try JSONParser().parse(bytes) })
        else { return nil }
        var learner: String?, course: String?, current: String?, started: Int?, updated: Int?, completed: Bool?
        var watched: Set<String> = [], positions: [String: Double] = [:]
        var best: QuizAttempt?, latest: QuizAttempt?
        for member in object {
            switch (member.key, member.value) {
            case ("learner", .string(let text)): learner = text
            case ("course", .string(let text)): course = text
            case ("current", .string(let text)): current = text
            case ("current", .null), ("best", .null), ("latest", .null): continue
            case ("completed", .bool(let flag)): completed = flag
            case ("started_at", .integer(let number)): started = number
            case ("updated_at", .integer(let number)): updated = number
            case ("watched", .array(let ids)):
                for id in ids {
                    guard case .string(let text) = id else { return nil }
                    watched.insert(text)
                }
            case ("positions", .object(let map)):
                for entry in map {
                    switch entry.value {
                    case .double(let seconds): positions[entry.key] = seconds
                    case .integer(let seconds): positions[entry.key] = Double(seconds)
                    default: return nil
                    }
                }
            case ("best", let attempt):
                guard let decoded = QuizAttempt(journalJSON: attempt) else { return nil }
                best = decoded
            case ("latest", let attempt):
                guard let decoded = QuizAttempt(journalJSON: attempt) else { return nil }
                latest = decoded
            default: return nil
            }
        }
        guard let learner, let course, let started, let updated, let completed else { return nil }
        self.init(
            learner: learner, course: course, watched: watched, positions: positions, currentLesson: current,
            bestAttempt: best, latestAttempt: latest, completed: completed, startedAt: Int64(started), updatedAt: Int64(updated))
    }
}

extension QuizAttempt {
    var journalJSON: JSONValue {
        [
            "score": .integer(score), "total": .integer(total), "wrong": .array(wrong.map(JSONValue.string)),
            "answers": .array(answers.map(JSONValue.integer)), "at": .integer(Int(submittedAt)),
        ]
    }

    init?(journalJSON value: JSONValue) {
        guard case .integer(let score)? = value["score"], case .integer(let total)? = value["total"],
            case .array(let wrongValues)? = value["wrong"], case .array(let answerValues)? = value["answers"],
            case .integer(let at)? = value["at"]
        else { return nil }
        var wrong: [String] = []
        for item in wrongValues {
            guard case .string(let id) = item else { return nil }
            wrong.append(id)
        }
        var answers: [Int] = []
        for item in answerValues {
            guard case .integer(let answer) = item else { return nil }
            answers.append(answer)
        }
        self.init(score: score, total: total, wrong: wrong, answers: answers, submittedAt: Int64(at))
    }
}
