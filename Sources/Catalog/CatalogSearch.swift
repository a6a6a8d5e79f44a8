import Foundation

/// A course that matches a search, how well, and which of its lessons matched.
public struct SearchHit: Sendable {
    public let course: Course
    /// Higher is better; only the order is meaningful.
    public let score: Int
    /// Lessons whose titles match, in course order.
    public let lessons: [Lesson]
}

/// The folded (case- and diacritic-free) words of one course, computed once per catalog.
struct SearchIndexEntry: Sendable {
    let title: String
    let titleWords: [String]
    let categoryWords: [String]
    let description: String
    let descriptionWords: [String]
    let lessons: [(text: String, words: [String])]

    init(_ course: Course) {
        title = SearchText.fold(course.title)
        titleWords = SearchText.words(title)
        categoryWords = SearchText.words(SearchText.fold(course.category ?? ""))
        description = SearchText.fold(course.description ?? "")
        descriptionWords = SearchText.words(description)
        lessons = course.lessons.map { lesson in
            let text = SearchText.fold(lesson.title)
            return (text, SearchText.words(text))
        }
    }
}

enum SearchText {
    static func fold(_ text: String) -> String {
        text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
    }

    static func words(_ folded: String) -> [String] {
        folded.split { !($0.isLetter || $0.isNumber) }.map(String.init)
    }

    /// 3 for an equal word, 2 for a word with the term as prefix, 1 for a substring, else 0.
    static func match(_ term: String, words: [String], text: String) -> Int {
        if words.contains(term) { return 3 }
        if words.contains(where: { $0.hasPrefix(term) }) { return 2 }
        return text.contains(term) ? 1 : 0
    }
}

extension Catalog {
    /// The most terms of a query that are considered.
    public static let maxSearchTerms = 10

    /// Courses matching every word of `query` in their title, category, description or lesson
    /// titles, ignoring case and diacritics; best first (title matches outrank lesson titles,
    /// which outrank categories and descriptions), ties in title order.
    public func search(_ query: String, limit: Int) -> [SearchHit] {
        let foldedQuery = SearchText.fold(query)
        let terms = Array(SearchText.words(foldedQuery).prefix(Self.maxSearchTerms))
        guard !terms.isEmpty else { return [] }
        let phrase = terms.joined(separator: " ")
        var hits: [SearchHit] = []
        for (course, entry) in zip(courses, searchIndex) {
            var score = 0
            var lessonMatches = Array(repeating: false, count: entry.lessons.count)
            var matchesAll = true
            for term in terms {
                let title = [0, 7, 9, 12][SearchText.match(term, words: entry.titleWords, text: entry.title)]
                let category = [0, 0, 3, 4][SearchText.match(term, words: entry.categoryWords, text: "")]
                let description = [0, 1, 2, 2][SearchText.match(term, words: entry.descriptionWords, text: entry.description)]
                var lesson = 0
                for (index, lessonEntry) in entry.lessons.enumerated() {
                    let strength = [0, 2, 4, 5][SearchText.match(term, words: lessonEntry.words, text: lessonEntry.text)]
                    if strength > 0 { lessonMatches[index] = true }
                    lesson = max(lesson, strength)
                }
                let best = max(title, category, description, lesson)
                guard best > 0 else {
                    matchesAll = false
                    break
                }
                score += best
            }
            guard matchesAll else { continue }
            if terms.count > 1, entry.title.contains(phrase) { score += 5 }
            let lessons = zip(course.lessons, lessonMatches).filter(\.1).map(\.0)
            hits.append(SearchHit(course: course, score: score, lessons: lessons))
        }
        hits.sort { $0.score != $1.score ? $0.score > $1.score : ($0.course.title, $0.course.id) < ($1.course.title, $1.course.id) }
        return Array(hits.prefix(max(1, limit)))
    }
}
