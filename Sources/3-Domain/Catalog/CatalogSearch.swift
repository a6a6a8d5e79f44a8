import Foundation

/// A course that matches a search, how well, and which of its lessons matched.
public struct SearchHit: Sendable {
    /// The matching course.
    public let course: Course
    /// Higher is better; only the order is meaningful.
    public let score: Int
    /// Lessons whose titles match, in course order.
    public let lessons: [Lesson]
}

/// The folded (case-, diacritic- and width-free) UTF-8 text and words of one course, computed
/// once per catalog so that a search compares bytes only.
struct SearchIndexEntry: Sendable {
    struct Field: Sendable {
        let text: [UInt8]
        let words: [[UInt8]]

        init(_ text: String?) {
            self.text = Array(SearchText.fold(text ?? "").utf8)
            words = SearchText.words(self.text)
        }
    }

    let title: Field
    let category: Field
    let description: Field
    let lessons: [Field]

    init(_ course: Course) {
        title = Field(course.title)
        category = Field(course.category)
        description = Field(course.description)
        lessons = course.lessons.map { Field($0.title) }
    }
}

enum SearchText {
    static func fold(_ text: String) -> String {
        // Queries are folded on every search: ASCII, the common case, needs no Foundation.
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return text.lowercased() }
        return text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
    }

    /// Maximal runs of letters and digits; any non-ASCII byte counts as part of a word.
    static func words(_ text: [UInt8]) -> [[UInt8]] {
        text.split { byte in
            byte < 0x80 && !((UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte))
        }.map(Array.init)
    }

    /// The score of a match strength for a field: `substring`, `prefix` or `word` points.
    static func weight(_ strength: Int, _ substring: Int, _ prefix: Int, _ word: Int) -> Int {
        switch strength {
        case 3: word
        case 2: prefix
        case 1: substring
        default: 0
        }
    }

    /// 3 for an equal word, 2 for a word with the term as prefix, 1 for a substring, else 0.
    static func match(_ term: [UInt8], in field: SearchIndexEntry.Field) -> Int {
        var best = 0
        for word in field.words where word.count >= term.count {
            if word == term { return 3 }
            if word.starts(with: term) { best = 2 }
        }
        if best == 0, contains(field.text, term) { best = 1 }
        return best
    }

    static func contains(_ text: [UInt8], _ term: [UInt8]) -> Bool {
        guard !term.isEmpty, text.count >= term.count else { return false }
        for start in 0...(text.count - term.count) where text[start] == term[0] {
            if text[start..<start + term.count].elementsEqual(term) { return true }
        }
        return false
    }
}

extension Catalog {
    /// The most terms of a query that are considered.
    public static let maxSearchTerms = 10
    /// The most hits one search page holds.
    public static let maxSearchLimit = 50

    /// Courses matching every word of `query` in their title, category, description or lesson
    /// titles, ignoring case and diacritics; best first (title matches outrank lesson titles,
    /// which outrank categories and descriptions), ties in title order.
    public func search(_ query: String, limit: Int) -> [SearchHit] {
        let terms = Array(SearchText.words(Array(SearchText.fold(query).utf8)).prefix(Self.maxSearchTerms))
        guard !terms.isEmpty else { return [] }
        let phrase = Array(terms.joined(separator: [UInt8(ascii: " ")]))
        var hits: [(hit: SearchHit, rank: Int)] = []
        for (position, (course, entry)) in zip(courses, searchIndex).enumerated() {
            var score = 0
            var lessonMatches = Array(repeating: false, count: entry.lessons.count)
            var matchesAll = true
            for term in terms {
                let title = SearchText.weight(SearchText.match(term, in: entry.title), 7, 9, 12)
                let category = SearchText.weight(SearchText.match(term, in: entry.category), 1, 3, 4)
                let description = SearchText.weight(SearchText.match(term, in: entry.description), 1, 2, 2)
                var lesson = 0
                for (index, field) in entry.lessons.enumerated() {
                    let strength = SearchText.weight(SearchText.match(term, in: field), 2, 4, 5)
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
            if terms.count > 1, SearchText.contains(entry.title.text, phrase) { score += 5 }
            let lessons = zip(course.lessons, lessonMatches).filter(\.1).map(\.0)
            hits.append((SearchHit(course: course, score: score, lessons: lessons), titleRanks[position]))
        }
        hits.sort { $0.hit.score != $1.hit.score ? $0.hit.score > $1.hit.score : $0.rank < $1.rank }
        return hits.prefix(max(1, limit)).map(\.hit)
    }
}
