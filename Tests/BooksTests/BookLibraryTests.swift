import Books
import Foundation
import Journal
import Testing

@Suite struct BookLibraryTests {
    /// The UUID of the `index`th test book.
    func uuid(_ index: Int) -> String { "00000000-0000-4000-8000-" + String(repeating: "0", count: 11 - String(index).count) + "9" + String(index) }

    func library(_ books: [(String, String, Genre, Int)], learner: String = "ada") throws -> BookLibrary {
        var library = BookLibrary()
        for (index, (title, author, genre, rating)) in books.enumerated() {
            let draft = try BookDraft(title: title, author: author, genre: genre, rating: rating)
            let (_, change) = library.creation(of: draft, id: uuid(index), learner: learner, now: Int64(1_000 + index))
            try library.apply(change)
        }
        return library
    }

    @Test func validatesEveryField() {
        #expect(throws: BookError(.invalidField, field: "title", "must not be empty")) {
            try BookDraft(title: "  ", author: "A", genre: .kids, rating: 3)
        }
        #expect(throws: BookError(.invalidField, field: "author", "must be at most 120 characters")) {
            try BookDraft(title: "T", author: String(repeating: "é", count: 121), genre: .kids, rating: 3)
        }
        #expect(throws: BookError(.invalidField, field: "rating", "must be between 1 and 5")) {
            try BookDraft(title: "T", author: "A", genre: .kids, rating: 0)
        }
        #expect(throws: BookError(.invalidField, field: "review", "must be at most 4000 characters")) {
            try BookDraft(title: "T", author: "A", genre: .kids, rating: 3, review: String(repeating: "x", count: 4_001))
        }
        #expect(throws: BookError.self) { try Book.genre(named: "fantasy") }
        #expect(throws: BookError.self) { try BookPatch() }
    }

    @Test func updatesBumpTheVersionAndCheckTheExpectedOne() throws {
        var library = try library([("Dune", "Frank Herbert", .fantasy, 5)])
        let patch = try BookPatch(rating: 4)
        let (updated, change) = try library.update(uuid(0), of: "ada", with: patch, expectedVersion: 1, now: 5_000)
        #expect(updated.version == 2 && updated.rating == 4 && updated.title == "Dune" && updated.updatedAt == 5_000)
        try library.apply(change)
        #expect(library.book(uuid(0), of: "ada") == updated)
        #expect(throws: BookError(.versionConflict, field: "expected_version", "the book is at version 2, not 1")) {
            try library.update(uuid(0), of: "ada", with: patch, expectedVersion: 1, now: 6_000)
        }
        #expect(throws: BookError.self) { try library.deletion(of: uuid(0), of: "grace", expectedVersion: nil) }
        #expect(throws: BookError.self) { try library.deletion(of: "not-a-uuid", of: "ada", expectedVersion: nil) }
        #expect(library.book(uuid(0).uppercased(), of: "ada")?.id == uuid(0))
        try library.apply(try library.deletion(of: uuid(0), of: "ada", expectedVersion: 2))
        #expect(library.book(uuid(0), of: "ada") == nil && library.count == 0)
    }

    @Test func listsSortedFilteredAndPagedWithStableCursors() throws {
        let library = try library([
            ("dune", "Frank Herbert", .fantasy, 5), ("Carrie", "Stephen King", .horror, 3),
            ("Émile", "Rousseau", .kids, 4), ("It", "Stephen King", .horror, 4), ("Beloved", "Toni Morrison", .romance, 5),
        ])
        let byTitle = try library.page(of: "ada", BookQuery(sort: .title, limit: 10))
        #expect(byTitle.books.map(\.title) == ["Beloved", "Carrie", "dune", "Émile", "It"])
        #expect(byTitle.nextCursor == nil)

        var titles: [String] = []
        var query = BookQuery(sort: .rating, descending: true, limit: 2)
        repeat {
            let page = try library.page(of: "ada", query)
            titles += page.books.map(\.title)
            query.cursor = page.nextCursor
        } while query.cursor != nil
        // Equal ratings fall back to the id, reversed too, so the order is total and pages never overlap.
        #expect(titles == ["Beloved", "dune", "It", "Émile", "Carrie"])

        let kings = try library.page(of: "ada", BookQuery(author: "stephen king", minRating: 4))
        #expect(kings.books.map(\.title) == ["It"])
        #expect(try library.page(of: "ada", BookQuery(genre: .horror)).books.count == 2)
        #expect(throws: BookError(.invalidField, field: "cursor", "is not a cursor of this listing")) {
            try library.page(of: "ada", BookQuery(sort: .title, cursor: byTitle.nextCursor ?? "zz"))
        }
    }

    @Test func snapshotAndPayloadsRebuildTheSameLibrary() throws {
        let original = try library([("Ἰλιάς", "Ὅμηρος", .poetry, 5), ("Dune", "Frank Herbert", .fantasy, 4)])
        var rebuilt = BookLibrary()
        for change in original.snapshot() { try rebuilt.apply(change) }
        #expect(rebuilt.count == 2)
        #expect(rebuilt.book(uuid(0), of: "ada") == original.book(uuid(0), of: "ada"))
        // A value that does not decode is refused, naming what is wrong, and changes nothing.
        #expect(throws: UndecodableValue(collection: "books", key: "ada/x", .malformed("the member \"id\" is unknown or of the wrong type"))) {
            try rebuilt.apply(.put(BookLibrary.collection, key: "ada/x", value: Array("{\"id\":1}".utf8)))
        }
        var cookery = try #require(original.book(uuid(0), of: "ada"))
        cookery.title = "Larousse"
        let value = String(decoding: cookery.journalValue(), as: UTF8.self).replacingOccurrences(of: "Poetry", with: "Cookery")
        #expect(throws: UndecodableValue(collection: "books", key: "ada/k", .malformed("the genre \"Cookery\" is not one of Fantasy, Horror, Kids, Mystery, Poetry, Romance, Thriller"))) {
            try rebuilt.apply(.put(BookLibrary.collection, key: "ada/k", value: Array(value.utf8)))
        }
        #expect(rebuilt.count == 2 && rebuilt.book(uuid(0), of: "ada")?.title == "Ἰλιάς")
    }

    @Test func valuesOfEveryFormatUpToTheNewestDecodeAndNewerOnesAreRefused() throws {
        let book = Book(
            id: uuid(1), learner: "ada", title: "Dune", author: "Frank Herbert", genre: .fantasy, rating: 5, review: "",
            version: 1, createdAt: 1, updatedAt: 2)
        let stamped = String(decoding: book.journalValue(), as: UTF8.self)
        #expect(stamped.hasPrefix(#"{"value_format":1,"id":"#))
        // What the release before value formats wrote: no stamp, version 1.
        let unstamped = stamped.replacingOccurrences(of: #""value_format":1,"#, with: "")
        #expect(try Book(journalValue: Array(unstamped.utf8)) == book)
        #expect(try Book(journalValue: Array(stamped.utf8)) == book)
        let newer = stamped.replacingOccurrences(of: #""value_format":1,"#, with: #""value_format":2,"#)
        #expect(throws: ValueDecodingError.newerFormat(found: 2, newestReadable: 1)) { try Book(journalValue: Array(newer.utf8)) }
        #expect(
            ValueDecodingError.newerFormat(found: 2, newestReadable: 1).description
                == "written by a newer Lyceum: value format v2, this build reads up to v1")
    }

    @Test func theFastAndTheGeneralDecodingAgree() throws {
        let book = Book(
            id: "b1", learner: "ada", title: "Ἰλιάς \"Α\"", author: "Ὅμηρος", genre: .poetry, rating: 5, review: "line\nbreak",
            version: 3, createdAt: 1, updatedAt: 2)
        #expect(try Book(journalValue: book.journalValue()) == book)
        let reordered = #"{"learner":"ada","id":"b1","title":"Ἰλιάς \"Α\"","author":"Ὅμηρος","genre":"Poetry","rating":5,"#
            + #""review":"line\nbreak","version":3,"created_at":1,"updated_at":2}"#
        #expect(try Book(journalValue: Array(reordered.utf8)) == book)
        #expect(throws: ValueDecodingError.malformed(#"the member "learner" is missing"#)) { try Book(journalValue: Array(#"{"id":"b1"}"#.utf8)) }
    }
}
