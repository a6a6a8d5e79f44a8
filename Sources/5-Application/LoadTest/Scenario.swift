import LyceumSupport

/// One kind of request a benchmark sends, with the name used on the command line.
public enum Scenario: String, CaseIterable, Sendable {
    /// `catalog.get_course` of a course the catalog lists.
    case catalogRead = "catalog-read"
    /// `books.get` of a book this client created during setup.
    case bookRead = "book-read"
    /// `books.create` of a new synthetic book.
    case bookCreate = "book-create"
    /// `books.update` of the rating and review of a setup book.
    case bookUpdate = "book-update"
    /// `books.delete` of a book this run created (a create when none is left to delete).
    case bookDelete = "book-delete"
    /// `books.list` of a learner's library as ``BookListing`` says: connection `i` lists the
    /// run's learner `i` modulo their count, following `next_cursor` or one page again.
    case bookList = "book-list"
    /// `progress.mark_watched` of a lesson of a course that has lessons, then, as the
    /// connection's next progress request, `mark_unwatched` of the same lesson: each changes the
    /// learner's progress, so every request writes a record (marking a watched lesson again
    /// would write nothing, and a run over a few learners would soon be all no-ops).
    case progressWatch = "progress-watch"
    /// `progress.submit_quiz` with random answers to a course's quiz.
    case quizSubmit = "quiz-submit"

    /// The Majordomo service the scenario's requests go to.
    public var service: String {
        switch self {
        case .catalogRead: "catalog"
        case .bookRead, .bookCreate, .bookUpdate, .bookDelete, .bookList: "books"
        case .progressWatch, .quizSubmit: "progress"
        }
    }
}

/// Scenarios with relative weights; each request picks one at random in proportion.
public struct ScenarioMix: Sendable, Equatable, CustomStringConvertible {
    /// The scenarios and their weights, all weights positive.
    public let entries: [(scenario: Scenario, weight: Int)]

    /// The "realistic" mix: mostly reads, some progress, a few library edits.
    public static let realistic = ScenarioMix(validated: [
        (.catalogRead, 40), (.bookRead, 30), (.progressWatch, 15), (.quizSubmit, 3),
        (.bookCreate, 6), (.bookUpdate, 4), (.bookDelete, 2),
    ])

    private init(validated entries: [(scenario: Scenario, weight: Int)]) { self.entries = entries }

    /// Reads `catalog-read`, `mix`, or `book-read=60,catalog-read=40`.
    /// - Throws: ``LoadTestError/Code/invalidOption`` naming the part that is not a scenario or weight.
    public init(parsing text: String) throws(LoadTestError) {
        if text == "mix" {
            self = .realistic
            return
        }
        var entries: [(scenario: Scenario, weight: Int)] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let pieces = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let names = Scenario.allCases.map(\.rawValue).joined(separator: ", ")
            guard let scenario = Scenario(rawValue: String(pieces[0])) else {
                throw LoadTestError(code: .invalidOption, option: "--scenario",
                                    detail: "'\(pieces[0])' is not a scenario; use mix or one of \(names), optionally NAME=WEIGHT,…")
            }
            var weight = 1
            if pieces.count == 2 {
                guard let value = Int(pieces[1]), value > 0, value <= 1_000_000 else {
                    throw LoadTestError(code: .invalidOption, option: "--scenario",
                                        detail: "the weight of \(scenario.rawValue) must be a whole number from 1 to 1000000, not '\(pieces[1])'")
                }
                weight = value
            }
            guard !entries.contains(where: { $0.scenario == scenario }) else {
                throw LoadTestError(code: .invalidOption, option: "--scenario", detail: "\(scenario.rawValue) is named twice")
            }
            entries.append((scenario, weight))
        }
        self.init(validated: entries)
    }

    /// Picks a scenario in proportion to the weights.
    public func pick(using generator: inout SeededGenerator) -> Scenario {
        let total = entries.reduce(0) { $0 + $1.weight }
        var roll = Int.random(in: 0..<total, using: &generator)
        for entry in entries {
            if roll < entry.weight { return entry.scenario }
            roll -= entry.weight
        }
        return entries[entries.count - 1].scenario
    }

    /// Whether any scenario of the mix is one of `scenarios`.
    public func includes(any scenarios: Set<Scenario>) -> Bool {
        entries.contains { scenarios.contains($0.scenario) }
    }

    /// `catalog-read=40,book-read=30`, the form `init(parsing:)` reads.
    public var description: String {
        entries.count == 1 ? entries[0].scenario.rawValue : entries.map { "\($0.scenario.rawValue)=\($0.weight)" }.joined(separator: ",")
    }

    /// Same scenarios with the same weights in the same order.
    public static func == (lhs: ScenarioMix, rhs: ScenarioMix) -> Bool {
        lhs.entries.elementsEqual(rhs.entries) { $0.scenario == $1.scenario && $0.weight == $1.weight }
    }
}
