import Books
import Foundation
import Journal
import LyceumSupport
import Testing

/// Issue 40: a learner's books are kept in every order a list offers. Every page, walked by its
/// cursors, must give exactly what a reference sort of the whole library gives (filter, then
/// order by the sort key and id), for every sort, order and filter, after creates, updates,
/// deletes and a rebuild from the journal's changes; and the byte and count limits refuse a
/// write without changing anything.
@Suite struct BookPagingTests {
    static let titles = ["Dune", "dune", "Émile", "emile", "Zorba", "It", "Ἰλιάς", "Война и мир", "the Hobbit", "The Road", "a", "A", "ß", "Ω"]
    static let authors = ["Frank Herbert", "frank herbert", "Stephen King", "Ὅμηρος", "Лев Толстой", "Toni Morrison", "J. R. R. Tolkien"]

    /// The id of the `index`th book, spelled in lowercase, with uppercase for some: ties must go
    /// by the id's value whatever its spelling.
    static func id(_ index: Int, uppercase: Bool = false) -> String {
        let hex = String(index, radix: 16)
        let text = "00000000-0000-4000-8000-" + String(repeating: "0", count: 12 - hex.count) + hex
        return uppercase ? text.uppercased() : text
    }

    /// A library of `count` books of one learner, drawn from a seeded generator, some of them
    /// then updated and deleted through the library's own planning.
    static func library(count: Int, seed: UInt64) throws -> BookLibrary {
        var generator = SeededGenerator(seed: seed)
        var library = BookLibrary()
        for index in 0..<count {
            let book = Book(
                id: id(index, uppercase: index % 11 == 0), learner: "ada", title: titles[Int(generator.next() % UInt64(titles.count))] + " \(generator.next() % 7)",
                author: authors[Int(generator.next() % UInt64(authors.count))], genre: Genre.allCases[Int(generator.next() % 7)],
                rating: Int(generator.next() % 5) + 1, review: "", version: 1, createdAt: Int64(generator.next() % 50), updatedAt: 0)
            try library.apply(.put(BookLibrary.collection, key: "ada/" + book.id, value: book.journalValue()))
        }
        // Updates move books within every order; deletes take them out.
        for index in stride(from: 0, to: count, by: 5) {
            var json: [UInt8] = []
            let patch = try BookPatch(title: titles[index % titles.count], author: authors[(index / 5) % authors.count], rating: (index % 5) + 1)
            let (_, change) = try library.update(id(index), of: "ada", with: patch, expectedVersion: nil, now: Int64(index), limits: .standard, appendingJSONTo: &json)
            try library.apply(change)
        }
        for index in stride(from: 3, to: count, by: 7) {
            try library.apply(try library.deletion(of: id(index), of: "ada", expectedVersion: nil))
        }
        return library
    }

    /// What a list must return: the learner's books filtered, then ordered by the sort's key
    /// (`TextSortKey`'s folded bytes for texts), ties by the id's lowercase text.
    static func reference(_ books: [Book], _ query: BookQuery) -> [String] {
        func key(_ book: Book) -> [UInt8] {
            switch query.sort {
            case .title: Array(fold(book.title).utf8.prefix(512))
            case .author: Array(fold(book.author).utf8.prefix(512))
            case .rating, .created: []
            }
        }
        func number(_ book: Book) -> Int64 { query.sort == .rating ? Int64(book.rating) : query.sort == .created ? book.createdAt : 0 }
        let selected = books.filter { book in
            (query.genre.map { book.genre == $0 } ?? true) && (query.minRating.map { book.rating >= $0 } ?? true)
                && (query.author.map { book.author.lowercased() == $0.lowercased() } ?? true)
        }
        let ascending = selected.sorted { lhs, rhs in
            if number(lhs) != number(rhs) { return number(lhs) < number(rhs) }
            let (left, right) = (key(lhs), key(rhs))
            if left != right { return left.lexicographicallyPrecedes(right) }
            return lhs.id.lowercased() < rhs.id.lowercased()
        }
        return (query.descending ? ascending.reversed() : ascending).map(\.id)
    }

    static func fold(_ text: String) -> String {
        text.utf8.prefix(512).allSatisfy({ $0 < 0x80 })
            ? text.lowercased()
            : text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil).precomposedStringWithCanonicalMapping
    }

    /// Every page of `query`, following cursors; also checks that no page holds more than its
    /// limit and that a page with a cursor never repeats what came before.
    static func walk(_ library: BookLibrary, _ query: BookQuery) throws -> (ids: [String], pages: Int) {
        var query = query
        var ids: [String] = []
        var pages = 0
        repeat {
            let page = try library.page(of: "ada", query)
            #expect(page.books.count <= query.limit)
            ids += page.books.map(\.id)
            pages += 1
            try #require(pages < 10_000, "paging never ends")
            query.cursor = page.nextCursor
        } while query.cursor != nil
        return (ids, pages)
    }

    static let queries: [BookQuery] = BookSortKey.allCases.flatMap { sort in
        [false, true].flatMap { descending in
            [
                BookQuery(sort: sort, descending: descending, limit: 37),
                BookQuery(sort: sort, descending: descending, genre: .poetry, limit: 5),
                BookQuery(sort: sort, descending: descending, minRating: 4, limit: 50),
                BookQuery(sort: sort, descending: descending, author: "FRANK HERBERT", limit: 100),
                BookQuery(sort: sort, descending: descending, genre: .kids, author: "ὅμηρος", minRating: 2, limit: 3),
            ]
        }
    }

    @Test(arguments: queries)
    func everyPageFollowsTheReferenceOrder(query: BookQuery) throws {
        let library = try Self.library(count: 1_200, seed: 40)
        let books = library.ordered(of: "ada", by: .created)
        #expect(books.count == library.count)
        let (ids, _) = try Self.walk(library, query)
        #expect(ids == Self.reference(books, query), "\(query.sort) \(query.descending ? "desc" : "asc")")
    }

    @Test func aRebuildFromTheSnapshotOrdersAsTheLibraryItCameFrom() throws {
        let library = try Self.library(count: 1_500, seed: 7)
        var rebuilt = BookLibrary()
        for change in library.snapshot() { try rebuilt.apply(change) }
        // A replay defers the orders, sorted at the first list of the learner; then kept.
        var replayed = BookLibrary.replaying()
        for change in library.snapshot() { try replayed.apply(change) }
        replayed.prepareList(of: "ada")
        let late = Book(id: Self.id(99_999), learner: "ada", title: "Émile 2", author: "a", genre: .kids, rating: 3, review: "", version: 1, createdAt: 9, updatedAt: 9)
        for change in [JournalChange.put(BookLibrary.collection, key: "ada/" + late.id, value: late.journalValue())] {
            try replayed.apply(change)
            try rebuilt.apply(change)
        }
        for sort in BookSortKey.allCases {
            #expect(replayed.ordered(of: "ada", by: sort) == rebuilt.ordered(of: "ada", by: sort), "\(sort)")
            #expect(rebuilt.ordered(of: "ada", by: sort).filter { $0.id != late.id } == library.ordered(of: "ada", by: sort))
            let query = BookQuery(sort: sort, descending: sort == .rating, limit: 64)
            #expect(try Self.walk(replayed, query).ids == Self.reference(rebuilt.ordered(of: "ada", by: .title), query))
        }
    }

    @Test func aRareFilterPagesByBoundedScansAndStillFindsEveryBook() throws {
        // 10,000 books of which 20 are poetry: no page may look at more than
        // `BookQuery.maxScanned` books, so some pages come back short (or empty) with a cursor.
        var library = BookLibrary()
        for index in 0..<10_000 {
            let book = Book(
                id: Self.id(index), learner: "ada", title: "T\(index)", author: "A", genre: index % 500 == 7 ? .poetry : .kids,
                rating: 3, review: "", version: 1, createdAt: Int64(index), updatedAt: Int64(index))
            try library.apply(.put(BookLibrary.collection, key: "ada/" + book.id, value: book.journalValue()))
        }
        let query = BookQuery(sort: .created, genre: .poetry, limit: 50)
        let (ids, pages) = try Self.walk(library, query)
        #expect(ids == Self.reference(library.ordered(of: "ada", by: .created), query))
        #expect(ids.count == 20)
        #expect(pages >= 10_000 / BookQuery.maxScanned, "\(pages) pages for 10,000 books looked at in scans of \(BookQuery.maxScanned)")
        // A minimum rating listed by rating starts (or, descending, stops) at the floor: one page.
        let rated = BookQuery(sort: .rating, descending: true, minRating: 4, limit: 50)
        #expect(try Self.walk(library, rated).pages == 1)
    }

    @Test func cursorsResumeAfterBooksAddedAndRemovedBetweenPages() throws {
        var library = try Self.library(count: 600, seed: 3)
        var query = BookQuery(sort: .title, limit: 40)
        var seen: [String] = []
        var added = 10_000
        repeat {
            let page = try library.page(of: "ada", query)
            seen += page.books.map(\.id)
            query.cursor = page.nextCursor
            guard query.cursor != nil else { break }
            // Between pages: one book added past every title (U+10FFFD sorts last), and the
            // next book not yet listed removed.
            let book = Book(
                id: Self.id(added), learner: "ada", title: "\u{10FFFD} \(added)", author: "A", genre: .kids, rating: 1, review: "",
                version: 1, createdAt: 0, updatedAt: 0)
            try library.apply(.put(BookLibrary.collection, key: "ada/" + book.id, value: book.journalValue()))
            added += 1
            let order = library.ordered(of: "ada", by: .title).map(\.id)
            if let last = seen.last, let at = order.firstIndex(of: last), at + 1 < order.count {
                try library.apply(try library.deletion(of: order[at + 1], of: "ada", expectedVersion: nil))
            }
        } while true
        #expect(Set(seen).count == seen.count, "no book repeats")
        let final = library.ordered(of: "ada", by: .title).map(\.id)
        let firstDifference = zip(seen, final).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        #expect(seen == final, "every book still there, the added ones included, and only those: \(seen.count) listed, \(final.count) held, first difference at \(String(describing: firstDifference))")
    }

    @Test func everyBookStoredIsFoundByIdAfterRandomStoresAndDeletes() throws {
        // The shelf's id table removes by shifting entries back; lookups must find every book
        // that is there and none that is not, whatever the order of stores and deletes.
        var library = BookLibrary()
        var held = Set<Int>()
        var generator = SeededGenerator(seed: 99)
        for _ in 0..<20_000 {
            let index = Int(generator.next() % 3_000)
            if held.contains(index), generator.next() % 2 == 0 {
                try library.apply(.delete(BookLibrary.collection, key: "ada/" + Self.id(index)))
                held.remove(index)
            } else {
                let book = Book(
                    id: Self.id(index), learner: "ada", title: "T", author: "A", genre: .kids, rating: 1, review: "", version: 1,
                    createdAt: 0, updatedAt: 0)
                try library.apply(.put(BookLibrary.collection, key: "ada/" + book.id, value: book.journalValue()))
                held.insert(index)
            }
        }
        #expect(library.count == held.count)
        #expect((0..<3_000).allSatisfy { (library.book(Self.id($0), of: "ada") != nil) == held.contains($0) })
        #expect(Set(library.ordered(of: "ada", by: .created).map(\.id)) == Set(held.map { Self.id($0) }))
    }

    @Test func theLimitsRefuseAWriteAndChangeNothing() throws {
        var library = BookLibrary()
        let limits = LibraryLimits(books: 3, contentBytes: 1_024)
        var json: [UInt8] = []
        for index in 0..<3 {
            let (_, change) = try library.creation(
                of: try BookDraft(title: "T\(index)", author: "A", genre: .kids, rating: 3), id: Self.id(index), learner: "ada", now: 1,
                limits: limits, appendingJSONTo: &json)
            try library.apply(change)
        }
        json = []
        #expect(throws: BookError.self) {
            try library.creation(
                of: try BookDraft(title: "T", author: "A", genre: .kids, rating: 3), id: Self.id(9), learner: "ada", now: 1, limits: limits,
                appendingJSONTo: &json)
        }
        #expect(json.isEmpty, "nothing written for a refused create")
        do {
            _ = try library.creation(
                of: try BookDraft(title: "T", author: "A", genre: .kids, rating: 3), id: Self.id(9), learner: "ada", now: 1, limits: limits,
                appendingJSONTo: &json)
        } catch {
            #expect(error.code == .limitExceeded && error.message.contains("max-books-per-learner 3"), "\(error.message)")
        }
        // Another learner has a library of its own.
        _ = try library.creation(
            of: try BookDraft(title: "T", author: "A", genre: .kids, rating: 3), id: Self.id(9), learner: "grace", now: 1, limits: limits,
            appendingJSONTo: &json)
        // Bytes: an update that grows a book past the limit is refused; one that shrinks it is not.
        let long = String(repeating: "r", count: 1_100)
        do {
            _ = try library.update(Self.id(0), of: "ada", with: try BookPatch(review: long), expectedVersion: nil, now: 2, limits: limits, appendingJSONTo: &json)
            Issue.record("an update past max-library-bytes was planned")
        } catch {
            #expect(error.code == .limitExceeded && error.message.contains("max-library-bytes 1024"), "\(error.message)")
        }
        let roomy = LibraryLimits(books: 3, contentBytes: 10_000)
        let (_, grown) = try library.update(Self.id(0), of: "ada", with: try BookPatch(review: long), expectedVersion: nil, now: 2, limits: roomy, appendingJSONTo: &json)
        try library.apply(grown)
        #expect(library.holdings(of: "ada").contentBytes == 3 + 1_100 + 3 + 3)
        // Over a limit lowered since, a write that does not grow the library still goes through.
        let (_, shrunk) = try library.update(Self.id(0), of: "ada", with: try BookPatch(review: "short"), expectedVersion: nil, now: 3, limits: limits, appendingJSONTo: &json)
        try library.apply(shrunk)
        #expect(library.holdings(of: "ada") == (books: 3, contentBytes: 3 + 5 + 3 + 3))
        try library.apply(try library.deletion(of: Self.id(1), of: "ada", expectedVersion: nil))
        #expect(library.holdings(of: "ada") == (books: 2, contentBytes: 3 + 5 + 3))
        _ = try library.creation(
            of: try BookDraft(title: "T", author: "A", genre: .kids, rating: 3), id: Self.id(10), learner: "ada", now: 1, limits: limits,
            appendingJSONTo: &json)
    }
}

extension BookQuery: CustomTestStringConvertible {
    public var testDescription: String {
        "\(sort)\(descending ? " desc" : "") genre=\(genre?.rawValue ?? "-") author=\(author ?? "-") min=\(minRating ?? 0) limit=\(limit)"
    }
}
