import Books
import JSON
import Foundation
import Journal
import Testing

@Suite struct BookLibraryTests {
    /// The UUID of the `index`th test book.
    func uuid(_ index: Int) -> String { "00000000-0000-4000-8000-" + String(repeating: "0", count: 11 - String(index).count) + "9" + String(index) }

    func written(_ book: Book) -> [UInt8] {
        var json: [UInt8] = []
        book.writeJSON(to: &json)
        return json
    }

    func library(_ books: [(String, String, Genre, Int)], learner: String = "ada") throws -> BookLibrary {
        var library = BookLibrary()
        for (index, (title, author, genre, rating)) in books.enumerated() {
            let draft = try BookDraft(title: title, author: author, genre: genre, rating: rating)
            var json: [UInt8] = []
            let (created, change) = try library.creation(of: draft, id: uuid(index), learner: learner, now: Int64(1_000 + index), limits: .standard, appendingJSONTo: &json)
            #expect(json == written(created) && change.value == created.journalValue(), "both forms, written in one pass")
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
        var json: [UInt8] = []
        let (updated, change) = try library.update(uuid(0), of: "ada", with: patch, expectedVersion: 1, now: 5_000, limits: .standard, appendingJSONTo: &json)
        #expect(updated.version == 2 && updated.rating == 4 && updated.title == "Dune" && updated.updatedAt == 5_000)
        #expect(json == written(updated) && change.value == updated.journalValue())
        try library.apply(change)
        #expect(library.book(uuid(0), of: "ada") == updated)
        #expect(throws: BookError(.versionConflict, field: "expected_version", "the book is at version 2, not 1")) {
            try library.update(uuid(0), of: "ada", with: patch, expectedVersion: 1, now: 6_000, limits: .standard, appendingJSONTo: &json)
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

    @Test func aStoredBookKeepsEveryFieldAsTheJournalHadIt() throws {
        // Values the API never writes but a journal may hold: an uppercase id, numbers outside
        // what validation allows. The compact store gives each back exactly, and so does its snapshot.
        let odd = Book(
            id: "3C73A0E2-5B1D-4F6A-9C8E-7D2B1A0F9E8D", learner: "ada", title: "Ἰλιάς", author: "Ὅμηρος", genre: .poetry,
            rating: 9, review: String(repeating: "ü", count: 300), version: Int.max, createdAt: -1, updatedAt: Int64.max)
        var library = BookLibrary()
        try library.apply(.put(BookLibrary.collection, key: "ada/" + odd.id, value: odd.journalValue()))
        #expect(library.book(odd.id.lowercased(), of: "ada") == odd)
        #expect(library.snapshot() == [.put(BookLibrary.collection, key: "ada/" + odd.id, value: odd.journalValue())])
        let listed = try library.page(of: "ada", BookQuery(sort: .title))
        #expect(listed.books == [odd])
    }

    @Test func aPackedBookWritesTheSameJSONAsTheBook() throws {
        // A read writes its reply from the packed bytes: the id as the journal spelled it (kept
        // when uppercase, spelled from its bits when not), texts that need escaping, sort keys
        // stored after the texts, an empty review.
        let books = [
            Book(
                id: "3C73A0E2-5B1D-4F6A-9C8E-7D2B1A0F9E8D", learner: "ada", title: "Ἰλιάς \"Α\"", author: "Ὅμηρος\\", genre: .poetry,
                rating: 9, review: String(repeating: "ü", count: 300), version: Int.max, createdAt: -1, updatedAt: Int64.max),
            Book(
                id: "0123abcd-ef45-4678-9abc-def012345678", learner: "ada", title: "tab\tand\u{1}", author: "line\nbreak",
                genre: .thriller, rating: 3, review: "", version: 12, createdAt: 1_780_000_000_123, updatedAt: 1_780_000_000_456),
        ]
        var library = BookLibrary()
        for book in books {
            try library.apply(.put(BookLibrary.collection, key: "ada/" + book.id, value: book.journalValue()))
            for spelling in [book.id, book.id.lowercased(), book.id.uppercased()] {
                let packed = try #require(library.packedBook(spelling, of: "ada"))
                var fromPacked: [UInt8] = [], fromBook: [UInt8] = []
                packed.writeJSON(to: &fromPacked)
                book.writeJSON(to: &fromBook)
                #expect(String(decoding: fromPacked, as: UTF8.self) == String(decoding: fromBook, as: UTF8.self))
            }
            #expect(library.packedBook(book.id, of: "bob") == nil)
        }
    }

    @Test func onlyTheTextOfAUUIDNamesABook() throws {
        var library = BookLibrary()
        let id = "0123abcd-ef45-4678-9abc-def012345678"
        try library.apply(.put(BookLibrary.collection, key: "ada/" + id, value: Book(
            id: id, learner: "ada", title: "t", author: "a", genre: .kids, rating: 1, review: "", version: 1, createdAt: 1,
            updatedAt: 1).journalValue()))
        #expect(library.book("0123ABCD-EF45-4678-9ABC-DEF012345678", of: "ada")?.id == id)
        for notAnID in [
            "0123abcd-ef45-4678-9abc-def01234567", "0123abcd-ef45-4678-9abc-def0123456789", "0123abcd_ef45-4678-9abc-def012345678",
            "0123abcd-ef45-4678-9abc-def01234567g", "0123abcd-ef45-4678-9abc-def01234567G", "0123abcd-ef45-4678-9abc-def01234567@",
            "0123abcd-ef45-4678-9abc-def01234567`", "0123abcd-ef45-4678-9abc-def01234567:", "0123abcd-ef45-4678-9abc-def01234567/",
            "0123abcdef-45-4678-9abc-def012345678", "0123abcd-ef45-4678-9abc-def0123456é", "",
        ] {
            #expect(library.packedBook(notAnID, of: "ada") == nil, "\(notAnID)")
        }
    }

    @Test func titleAndAuthorOrderIsTheFoldedOrderWhetherOrNotTheKeyIsStored() throws {
        // ASCII keys are derived when a list sorts; other keys are stored with the book. Both
        // must order as `TextSortKey` of the text would, including an ASCII head of 512 bytes
        // followed by other text (longer than the API's titles, but a journal may hold one),
        // and a lone combining mark, which folding keeps (so it sorts after every letter).
        let long = String(repeating: "b", count: 512)
        let titles: [String] = [long + "é", "Ábel", "abez", "ABEL", "\u{301}"]
        let authors: [String] = ["Émile Zola", "zola", "\u{301}", "ÉMILE", "Adam"]
        var library = BookLibrary()
        for index in titles.indices {
            let rating: Int = index + 1
            let book = Book(
                id: uuid(index), learner: "ada", title: titles[index], author: authors[index], genre: .kids, rating: rating,
                review: "", version: 1, createdAt: 1, updatedAt: 1)
            try library.apply(.put(BookLibrary.collection, key: "ada/" + book.id, value: book.journalValue()))
        }
        let byTitle = try library.page(of: "ada", BookQuery(sort: .title, limit: 10)).books.map(\.rating)
        #expect(byTitle == [2, 4, 3, 1, 5])
        let byAuthor = try library.page(of: "ada", BookQuery(sort: .author, limit: 10)).books.map(\.rating)
        #expect(byAuthor == [5, 4, 1, 2, 3])
    }

    @Test func aJournalPayloadIsItsMembersAsOneCompactObjectInTheirOrder() throws {
        // Written member by member, it must stay byte for byte what the `JSONValue` of the same
        // members serializes to, escapes included, or journals would change shape.
        let book = Book(
            id: uuid(4), learner: "a\"da", title: "Ἰλιάς \"Α\"\\", author: "Ὅμηρος\t", genre: .poetry, rating: 5,
            review: "line\nbreak", version: 3, createdAt: -1, updatedAt: Int64.max)
        let format: Int = Book.valueFormat
        let latest = Int(Int64.max)
        var members: [(String, JSONValue)] = [("value_format", .integer(format)), ("id", .string(book.id))]
        members.append(("learner", .string(book.learner)))
        members.append(("title", .string(book.title)))
        members.append(("author", .string(book.author)))
        members.append(("genre", .string("Poetry")))
        members.append(("rating", .integer(5)))
        members.append(("review", .string(book.review)))
        members.append(("version", .integer(3)))
        members.append(("created_at", .integer(-1)))
        members.append(("updated_at", .integer(latest)))
        let object = JSONValue.object(JSONObject(members.map { JSONObject.Member(key: $0.0, value: $0.1) }))
        #expect(book.journalValue() == object.serialized())
        #expect(try Book(journalValue: book.journalValue()) == book)
    }
}
