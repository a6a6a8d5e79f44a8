import Catalog
import Journal

/// Every learner's progress in every course, with per-course aggregates kept up to date as
/// changes are applied: a copy-on-write value built from the `progress` journal collection.
public struct ProgressRecords: JournalState, Sendable {
    /// The journal collection of progress records; keys are `learner/course`.
    public static let collection = "progress"

    /// Dashboard figures of one course.
    public struct CourseStatistics: Sendable, Equatable {
        /// Learners with a progress record in the course.
        public var started = 0
        /// Learners whose record is complete.
        public var completed = 0
        /// Learners with at least one quiz attempt.
        public var quizTakers = 0
        /// Sum over quiz takers of their best fraction, for the average: what partitions report,
        /// so that the average of their union is exact.
        public var bestFractionSum = 0.0

        /// No learners.
        public init() {}

        /// The figures of `other`'s learners added to these: the statistics of learners held in
        /// several partitions are the sum of each partition's.
        public mutating func add(_ other: CourseStatistics) {
            started += other.started
            completed += other.completed
            quizTakers += other.quizTakers
            bestFractionSum += other.bestFractionSum
        }

        /// Mean best quiz score as a percentage, `nil` when nobody took the quiz.
        public var averageScorePercent: Double? {
            quizTakers == 0 ? nil : (bestFractionSum / Double(quizTakers) * 1000).rounded() / 10
        }

        mutating func add(_ record: CourseProgress, sign: Int) {
            started += sign
            if record.completed { completed += sign }
            if let best = record.bestAttempt {
                quizTakers += sign
                bestFractionSum += Double(sign) * best.fraction
            }
        }
    }

    private var learners: [String: LearnerRecords] = [:]
    private var statistics: [String: CourseStatistics] = [:]

    /// No records.
    public init() {}

    /// `learner`'s record in `course`, if they started it.
    public func progress(of learner: String, in course: String) -> CourseProgress? { learners[learner]?.byCourse[course] }

    /// At most `limit` of `learner`'s records, most recently updated first (ties by course id),
    /// starting after the record last updated at `after.updatedAt` in `after.course` when given:
    /// the position a page ended at, so that paging survives changes between pages. A seek in
    /// the learner's kept order and a walk of `limit` records, however many the learner has.
    public func courses(of learner: String, after: (updatedAt: Int64, course: String)? = nil, limit: Int = .max) -> [CourseProgress] {
        learners[learner]?.records(after: after.map { LearnerRecords.Place(updatedAt: $0.updatedAt, course: $0.course) }, limit: limit) ?? []
    }

    /// The dashboard figures of `course`.
    public func statistics(of course: String) -> CourseStatistics { statistics[course] ?? CourseStatistics() }

    /// Applies a `progress` change, keeping the aggregates in step; ignores other collections.
    /// - Throws: `UndecodableValue` for a put whose value is not a record this build reads, or a
    ///   key that is not `learner/course`; the records are unchanged then.
    public mutating func apply(_ change: JournalChange) throws(UndecodableValue) {
        guard change.collection == Self.collection else { return }
        guard let value = change.value else {
            guard let slash = change.key.firstIndex(of: "/") else {
                throw UndecodableValue(change, .malformed("the key is not learner/course"))
            }
            remove(learner: String(change.key[..<slash]), course: String(change.key[change.key.index(after: slash)...]))
            return
        }
        // A put's payload names its learner and course (the key is derived from them on write).
        let record: CourseProgress
        do throws(ValueDecodingError) { record = try CourseProgress(journalValue: value) } catch { throw UndecodableValue(change, error) }
        store(record)
    }

    /// Stores `record` under its learner and course, keeping the aggregates in step: what
    /// applying a put of `record.journalValue()` does, without decoding the payload (the write
    /// path keeps the record it planned).
    public mutating func store(_ record: CourseProgress) {
        if let old = learners[record.learner, default: LearnerRecords()].store(record) {
            statistics[record.course, default: CourseStatistics()].add(old, sign: -1)
        }
        statistics[record.course, default: CourseStatistics()].add(record, sign: 1)
    }

    private mutating func remove(learner: String, course: String) {
        guard let old = learners[learner]?.remove(course: course) else { return }
        statistics[course, default: CourseStatistics()].add(old, sign: -1)
        if learners[learner]?.isEmpty == true { learners[learner] = nil }
    }

    /// One put per record.
    public func snapshot() -> [JournalChange] {
        learners.values.flatMap { courses in
            courses.byCourse.values.map { JournalChange.put(Self.collection, key: Self.key($0.learner, $0.course), value: $0.journalValue()) }
        }
    }

    static func key(_ learner: String, _ course: String) -> String { learner + "/" + course }
}
