import Books
import Foundation
import Journal
import Testing

/// Issue 14, finding 4: text limits count bytes and Unicode scalars as well as characters, and
/// title sorting compares bounded, precomputed keys without changing the order of ordinary titles.
@Suite struct BookTextLimitTests {
    func draft(title: String) throws(BookError) -> BookDraft { try BookDraft(title: title, author: "A", genre: .kids, rating: 3) }

    @Test func aCombiningAccentTitleIsRefusedByItsScalars() {
        // One character of 60 KB: accepted when only characters were counted.
        let title = "e" + String(repeating: "\u{301}", count: 30_000)
        #expect(throws: BookError(.invalidField, field: "title", "must be at most 1600 bytes of UTF-8")) { try draft(title: title) }
        // Five scalars (nine bytes) a character: the scalar limit binds before the byte limit.
        let stacked = "e\u{301}\u{302}\u{303}\u{304}"
        #expect(throws: BookError(.invalidField, field: "title", "must be at most 800 Unicode scalars")) {
            try draft(title: String(repeating: stacked, count: 161))
        }
        #expect(throws: BookError(.invalidField, field: "review", "must be at most 16000 Unicode scalars")) {
            try BookDraft(title: "T", author: "A", genre: .kids, rating: 3, review: String(repeating: stacked, count: 3_201))
        }
    }

    @Test func eachLimitHoldsExactlyAtItsBoundary() throws {
        // Characters: 200 accepted, 201 refused.
        _ = try draft(title: String(repeating: "x", count: 200))
        #expect(throws: BookError(.invalidField, field: "title", "must be at most 200 characters")) {
            try draft(title: String(repeating: "x", count: 201))
        }
        // Scalars: 200 characters of 4 scalars each is 800 scalars (1,400 bytes), accepted; one more is refused.
        let fourScalars = "e\u{301}\u{302}\u{303}"
        _ = try draft(title: String(repeating: fourScalars, count: 200))
        #expect(throws: BookError(.invalidField, field: "title", "must be at most 800 Unicode scalars")) {
            try draft(title: String(repeating: fourScalars, count: 199) + "e\u{301}\u{302}\u{303}\u{304}")
        }
        // Bytes: 200 emoji with a skin tone are 1,600 bytes (400 scalars), accepted; two more bytes are refused.
        let thumb = "👍🏽"
        _ = try draft(title: String(repeating: thumb, count: 200))
        #expect(throws: BookError(.invalidField, field: "title", "must be at most 1600 bytes of UTF-8")) {
            try draft(title: String(repeating: thumb, count: 199) + thumb + "\u{301}")
        }
    }

    /// The order lists had before sort keys: fold each title, compare as Unicode strings, ties by id.
    func referenceOrder(_ titles: [String]) -> [Int] {
        func fold(_ text: String) -> String {
            text.utf8.allSatisfy { $0 < 0x80 } ? text.lowercased() : text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
        }
        return titles.indices.sorted { (fold(titles[$0]), $0) < (fold(titles[$1]), $1) }
    }

    func listedOrder(_ titles: [String], descending: Bool = false, limit: Int = 100) throws -> [Int] {
        var library = BookLibrary()
        for (index, title) in titles.enumerated() {
            var json: [UInt8] = []
            let (_, change) = try library.creation(of: try draft(title: title), id: uuid(index), learner: "ada", now: Int64(index), limits: .standard, appendingJSONTo: &json)
            try library.apply(change)
        }
        var order: [Int] = []
        var cursor: String?
        repeat {
            let page = try library.page(of: "ada", BookQuery(sort: .title, descending: descending, limit: limit, cursor: cursor))
            order += page.books.map { Int($0.id.suffix(12))! }
            cursor = page.nextCursor
        } while cursor != nil
        return order
    }

    func uuid(_ index: Int) -> String { "00000000-0000-4000-8000-" + String(format: "%012d", index) }

    @Test func ordinaryTitlesKeepTheOrderTheyHad() throws {
        let titles = [
            "Émile", "emile", "Zorba", "zebra", "Ångström", "angstrom", "Война и мир", "война", "東京物語", "東京", "Œdipe", "oedipe",
            "Straße", "strasse", "Ça", "ca", "Dune", "dune 2", "Ελληνικά", "ελληνικα", "e\u{301}cole", "école", "🦉 owls", "10 days", "2 days",
        ]
        #expect(try listedOrder(titles) == referenceOrder(titles))
        #expect(try listedOrder(titles, descending: true) == referenceOrder(titles).reversed())
        // Paging with cursors, one book a page, gives the same order.
        #expect(try listedOrder(titles, limit: 1) == referenceOrder(titles))
    }

    @Test func hugeButValidTitlesSortCorrectlyAndPage() throws {
        // 200 characters of 4 scalars each: the largest titles allowed, differing only at the end.
        let base = String(repeating: "e\u{301}\u{302}\u{303}", count: 199)
        let titles = (0..<30).map { base + ["z", "a", "m", "b", "y"][$0 % 5] }.shuffled()
        let expected = titles.indices.sorted { (titles[$0].last!.unicodeScalars.first!.value, $0) < (titles[$1].last!.unicodeScalars.first!.value, $1) }
        #expect(try listedOrder(titles, limit: 7) == expected)
        #expect(try listedOrder(titles, limit: 7) == referenceOrder(titles))
    }
}
