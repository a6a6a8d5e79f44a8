/// One course's figures as dashboards show them (`lyceum watch`, the browser dashboard): how
/// many learners started it, how many completed it, how far they are on average, and their
/// average best quiz score.
public struct CourseFigures: Sendable, Equatable {
    /// The course's id.
    public let course: String
    /// Learners with progress in the course.
    public let started: Int
    /// Of those, learners who watched every lesson.
    public let completed: Int
    /// The mean of the learners' percentages watched (each rounded down, as the service reports
    /// it); `nil` when nobody started the course. A course whose learners are all half-way shows
    /// 50 here and 0 completed: active, not idle.
    public let averageProgressPercent: Double?
    /// The mean of the learners' best quiz scores in percent, over those who took the quiz;
    /// `nil` when none did.
    public let averageQuizPercent: Double?

    /// The figures of `course` from its learners' entries.
    public init(course: String, entries: some Collection<ProgressSubscriber.Entry>) {
        self.course = course
        started = entries.count
        completed = entries.count { $0.progress.completed }
        averageProgressPercent = entries.isEmpty ? nil : Double(entries.map(\.progress.percent).reduce(0, +)) / Double(entries.count)
        let scores = entries.compactMap(\.progress.bestScore).filter { $0.total > 0 }
        averageQuizPercent = scores.isEmpty ? nil : scores.map { Double($0.score) / Double($0.total) * 100 }.reduce(0, +) / Double(scores.count)
    }

    /// The figures of every course that has entries, by course id.
    public static func byCourse(_ entries: some Sequence<ProgressSubscriber.Entry>) -> [String: CourseFigures] {
        Dictionary(grouping: entries, by: \.course).mapValues { CourseFigures(course: $0[0].course, entries: $0) }
    }
}
