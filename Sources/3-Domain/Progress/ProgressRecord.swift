import JSON
import Journal

/// The compact JSON object a progress record is journaled as, and the fast path back.
extension CourseProgress {
    /// The newest value format of a stored progress record, the one `journalValue()` writes.
    /// Version 1 is also what records stored before values were versioned are.
    public static let valueFormat = 1

    /// This record as a journal payload stamped with `valueFormat`; deterministic (sets and maps
    /// in sorted order). Written member by member, in the order the fast decoding path reads.
    public func journalValue() -> [UInt8] {
        var writer = JSONObjectWriter()
        writer.member("value_format", Self.valueFormat)
        writer.member("learner", learner)
        writer.member("course", course)
        writer.member("watched", strings: watched.sorted())
        writer.member("positions", members: positions.sorted { $0.key < $1.key }.lazy.map { (key: $0.key, value: JSONValue.double($0.value)) })
        writer.member("current", currentLesson)
        writer.member("best", journalAttempt: bestAttempt)
        writer.member("latest", journalAttempt: latestAttempt)
        writer.member("completed", completed)
        writer.member("started_at", Int(startedAt))
        writer.member("updated_at", Int(updatedAt))
        return writer.finish()
    }

    /// Decodes a journal payload of any value format up to `valueFormat`, stamped or not.
    /// - Throws: `ValueDecodingError` saying which member is wrong, or that the value is of a
    ///   newer format.
    public init(journalValue bytes: [UInt8]) throws(ValueDecodingError) {
        // Replay decodes every record: read the members in the order `journalValue()` writes
        // them, and only parse generally when a payload was written some other way.
        let fast = JSONRecordReader.read(bytes) { (reader) -> CourseProgress? in
            guard !reader.member("value_format") || reader.integer() == Self.valueFormat,
                reader.member("learner"), let learner = reader.string(), reader.member("course"), let course = reader.string(),
                reader.member("watched"), case .array(let watchedValues)? = reader.anyValue(),
                reader.member("positions"), case .object(let positionValues)? = reader.anyValue(),
                reader.member("current"), let current = reader.anyValue(), reader.member("best"), let best = reader.anyValue(),
                reader.member("latest"), let latest = reader.anyValue(), reader.member("completed"), case .bool(let completed)? = reader.anyValue(),
                reader.member("started_at"), let started = reader.integer(), reader.member("updated_at"), let updated = reader.integer(),
                let watched = Self.lessonIDs(watchedValues), let positions = Self.positions(positionValues),
                let bestAttempt = Self.attempt(best), let latestAttempt = Self.attempt(latest)
            else { return nil }
            let currentLesson: String?
            switch current {
            case .string(let id): currentLesson = id
            case .null: currentLesson = nil
            default: return nil
            }
            return CourseProgress(
                learner: learner, course: course, watched: watched, positions: positions, currentLesson: currentLesson,
                bestAttempt: bestAttempt, latestAttempt: latestAttempt, completed: completed, startedAt: Int64(started),
                updatedAt: Int64(updated))
        }
        if let fast {
            self = fast
            return
        }
        // Version 1 is the only format so far; a later one migrates older values here.
        let (format, object) = try ValueFormat.object(bytes, newest: Self.valueFormat)
        var learner: String?, course: String?, current: String?, started: Int?, updated: Int?, completed: Bool?
        var watched: Set<String> = [], positions: [String: Double] = [:]
        var best: QuizAttempt?, latest: QuizAttempt?
        for member in object {
            switch (member.key, member.value) {
            case ("value_format", .integer(format)): continue
            case ("learner", .string(let text)): learner = text
            case ("course", .string(let text)): course = text
            case ("current", .string(let text)): current = text
            case ("current", .null), ("best", .null), ("latest", .null): continue
            case ("completed", .bool(let flag)): completed = flag
            case ("started_at", .integer(let number)): started = number
            case ("updated_at", .integer(let number)): updated = number
            case ("watched", .array(let ids)):
                guard let decoded = Self.lessonIDs(ids) else { throw .malformed("watched holds something other than lesson ids") }
                watched = decoded
            case ("positions", .object(let map)):
                guard let decoded = Self.positions(map) else { throw .malformed("positions holds something other than seconds") }
                positions = decoded
            case ("best", let attempt):
                guard let decoded = Self.attempt(attempt) else { throw .malformed("best is not a quiz attempt") }
                best = decoded
            case ("latest", let attempt):
                guard let decoded = Self.attempt(attempt) else { throw .malformed("latest is not a quiz attempt") }
                latest = decoded
            default: throw .malformed("the member \"\(member.key)\" is unknown or of the wrong type")
            }
        }
        typealias Member = ValueDecodingError
        self.init(
            learner: try Member.required(learner, "learner"), course: try Member.required(course, "course"), watched: watched,
            positions: positions, currentLesson: current, bestAttempt: best, latestAttempt: latest,
            completed: try Member.required(completed, "completed"), startedAt: Int64(try Member.required(started, "started_at")),
            updatedAt: Int64(try Member.required(updated, "updated_at")))
    }
}

extension CourseProgress {
    private static func lessonIDs(_ values: [JSONValue]) -> Set<String>? {
        var ids: Set<String> = []
        for value in values {
            guard case .string(let id) = value else { return nil }
            ids.insert(id)
        }
        return ids
    }

    private static func positions(_ object: JSONObject) -> [String: Double]? {
        var positions: [String: Double] = [:]
        for entry in object {
            switch entry.value {
            case .double(let seconds): positions[entry.key] = seconds
            case .integer(let seconds): positions[entry.key] = Double(seconds)
            default: return nil
            }
        }
        return positions
    }

    /// `.some(nil)` for JSON null, `.some(attempt)` for an attempt, `nil` for anything else.
    private static func attempt(_ value: JSONValue) -> QuizAttempt?? {
        if value == .null { return .some(nil) }
        return QuizAttempt(journalJSON: value).map { .some($0) }
    }
}

extension JSONObjectWriter {
    /// `"key": {"score", "total", "wrong", "answers", "at"}`, an attempt as records hold it, or
    /// `"key": null` without one.
    fileprivate mutating func member(_ key: StaticString, journalAttempt attempt: QuizAttempt?) {
        guard let attempt else { return member(key, JSONValue.null) }
        member(key, object: { (writer) in
            writer.member("score", attempt.score)
            writer.member("total", attempt.total)
            writer.member("wrong", strings: attempt.wrong)
            writer.member("answers", integers: attempt.answers)
            writer.member("at", Int(attempt.submittedAt))
        })
    }
}

extension QuizAttempt {
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
