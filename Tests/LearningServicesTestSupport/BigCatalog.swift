import LyceumSupport
import Catalog

/// A generated catalog file in Lyceum's own format, as big as a test needs: the same bytes for
/// the same arguments (a fixed pseudo-random sequence), so that a failure can be reproduced.
/// Courses are shaped like a real catalog's (a title of 3–5 words, a description of 30, eight
/// lessons of 4–6 words, a quiz on every fourth course) and spread over `categories` categories
/// in turn, so that each category's courses are interleaved with the others' in file order.
public enum BigCatalog {
    /// The category of the course at `index`: `Category 0`, `Category 1`, … in turn.
    public static func category(of index: Int, categories: Int) -> String { "Category \(index % categories)" }

    /// The file's bytes: `courses` courses with ids `c0`, `c1`, … over `categories` categories.
    public static func file(courses: Int, categories: Int = 24) -> [UInt8] {
        var words = Words()
        var out = Array(#"{"format":"lyceum-catalog","version":1,"courses":["#.utf8)
        for index in 0..<courses {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            let lessons = (0..<8).map { #"{"id":"l\#($0)","title":"\#(words.phrase(4 + words.below(3)))","duration":"12:30"}"# }
            let quiz = index % 4 == 0
                ? #","quiz":{"questions":[{"id":"q1","content":"\#(words.phrase(6))","answers":["yes","no"],"correct_index":1}]}"# : ""
            out += Array(#"""
                {"id":"c\#(index)","title":"\#(words.phrase(3 + words.below(3)))","category":"\#(category(of: index, categories: categories))",\#
                "description":"\#(words.phrase(30))","time":"3 Hours","lessons":[\#(lessons.joined(separator: ","))]\#(quiz)}
                """#.utf8)
        }
        out += Array("]}".utf8)
        return out
    }

    /// The catalog of `file(courses:categories:)`.
    public static func catalog(courses: Int, categories: Int = 24) throws(CatalogLoadError) -> Catalog {
        try Catalog.parse(file(courses: courses, categories: categories), file: "big-catalog.json")
    }

    /// Made-up words of two to four syllables from a fixed sequence (`SeededGenerator`).
    struct Words {
        static let syllables = ["ka", "lo", "mi", "ne", "ra", "to", "su", "vi", "de", "po", "an", "er", "is", "ul", "or", "et"]
        private var generator = SeededGenerator(seed: 42)

        mutating func below(_ bound: Int) -> Int { Int(generator.next() % UInt64(bound)) }

        mutating func phrase(_ count: Int) -> String {
            (0..<count).map { _ in (0..<(2 + below(3))).map { _ in Self.syllables[below(Self.syllables.count)] }.joined() }.joined(separator: " ")
        }
    }
}
