import JSON

/// A book as the library keeps it: one contiguous byte buffer holding the numbers and the UTF-8
/// of every text field, so that a library of a million books costs one heap block per book
/// instead of a Swift `String` per field plus sort-key arrays (issue 19: about 500 B per book
/// against Redis's 300 B per 200-byte value). The learner is the shelf's key and the id the
/// table's key, so neither is stored again unless the id is not spelled in lowercase.
///
/// Layout (native byte order; the buffer is never written anywhere):
///
/// | offset | size | field |
/// |---:|---:|---|
/// | 0 | 8 | version |
/// | 8 | 8 | created at, ms |
/// | 16 | 8 | updated at, ms |
/// | 24 | 8 | rating |
/// | 32 | 16 | id (`BookID`'s two words): what an ordered index breaks ties with (issue 40) |
/// | 48 | 4 each | byte counts of the six texts below |
/// | 72 | 1 | genre (index in `Genre.allCases`) |
/// | 73 | 1 | which sort keys are the text's ASCII lowercased (bit 0 title, bit 1 author); bit 7: `vacant` |
/// | 74 | … | id as spelled (empty when lowercase), title, author, review, title key, author key |
///
/// A sort key is stored only when `TextSortKey.derives(from:)` says it cannot be rebuilt from its text.
struct StoredBook: Sendable {
    private var bytes: [UInt8]

    private enum Text: Int { case id, title, author, review, titleKey, authorKey }
    private static let headerBytes = 74
    private static let idOffset = 32
    private static let lengthsOffset = 48
    private static let genreOffset = 72
    private static let derivedKeysOffset = 73

    private init(reservingTextBytes count: Int) {
        bytes = [UInt8](unsafeUninitializedCapacity: Self.headerBytes + count) { buffer, initialized in
            buffer.baseAddress!.initialize(repeating: 0, count: Self.headerBytes)
            initialized = Self.headerBytes
        }
    }

    /// What a shelf's free slot holds: no book (every accessor of it is meaningless), one
    /// buffer shared by every free slot.
    static let vacant: StoredBook = {
        var book = StoredBook(reservingTextBytes: 0)
        book.bytes[derivedKeysOffset] = vacantBit
        return book
    }()

    /// Whether this is `vacant`.
    var isVacant: Bool { bytes[Self.derivedKeysOffset] & Self.vacantBit != 0 }
    private static let vacantBit: UInt8 = 0x80

    /// Packs `book`, whose id parses as `id`.
    init(_ book: Book, id: BookID) {
        var text = book.id
        let keepsID = text.withUTF8 { Self.hasUppercase($0[...]) }
        self.init(reservingTextBytes: (keepsID ? text.utf8.count : 0) + book.title.utf8.count + book.author.utf8.count + book.review.utf8.count)
        // Field by field, not over an array of (field, text) pairs: every create and update
        // packs its book on the write path, and that array was a heap allocation each time.
        append(keepsID ? text : "", as: .id)
        append(book.title, as: .title)
        append(book.author, as: .author)
        append(book.review, as: .review)
        finish(id: id, version: book.version, createdAt: book.createdAt, updatedAt: book.updatedAt, rating: book.rating, genre: book.genre)
    }

    /// Reads a journal payload written in `Book.journalValue()`'s member order straight into
    /// the buffer, without a `String` per field: replay does this for every book. `nil` when
    /// the payload has another shape or a newer format, or its id is no book id; the caller
    /// then decodes it generally (which names what is wrong).
    static func decoded(journalValue value: [UInt8]) -> (learner: String, id: BookID, book: StoredBook)? {
        JSONRecordReader.read(value) { (reader) -> (String, BookID, StoredBook)? in
            var stored = StoredBook(reservingTextBytes: value.count)
            guard !reader.member("value_format") || reader.integer() == Book.valueFormat,
                reader.member("id"), let idCount = reader.string(appendingTo: &stored.bytes),
                let id = stored.bytes.withUnsafeBufferPointer({ BookID(utf8: UnsafeBufferPointer(rebasing: $0[Self.headerBytes...])) }),
                reader.member("learner"), let learner = reader.string()
            else { return nil }
            if stored.bytes.withUnsafeBufferPointer({ Self.hasUppercase($0[Self.headerBytes...]) }) {
                stored.setLength(idCount, of: .id)
            } else {
                stored.bytes.removeLast(idCount)
            }
            guard reader.member("title"), let titleCount = reader.string(appendingTo: &stored.bytes) else { return nil }
            stored.setLength(titleCount, of: .title)
            guard reader.member("author"), let authorCount = reader.string(appendingTo: &stored.bytes) else { return nil }
            stored.setLength(authorCount, of: .author)
            guard reader.member("genre"), let genreName = reader.string(), let genre = Genre(rawValue: genreName),
                reader.member("rating"), let rating = reader.integer(),
                reader.member("review"), let reviewCount = reader.string(appendingTo: &stored.bytes),
                reader.member("version"), let version = reader.integer(), reader.member("created_at"), let created = reader.integer(),
                reader.member("updated_at"), let updated = reader.integer()
            else { return nil }
            stored.setLength(reviewCount, of: .review)
            stored.finish(id: id, version: version, createdAt: Int64(created), updatedAt: Int64(updated), rating: rating, genre: genre)
            return (learner, id, stored)
        }
    }

    /// Whether an id's UTF-8 has uppercase hexadecimal digits, so that its text is kept (a
    /// lowercase id is spelled again from its bits). Over contiguous bytes: `String.utf8`'s
    /// generic iteration cost about 1.5k instructions a create (issue 26).
    private static func hasUppercase(_ id: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        id.contains { $0 &- UInt8(ascii: "A") < 6 }
    }

    /// Writes the numbers, appends the sort keys that cannot be derived, and gives back the
    /// room reserved beyond what the book takes (16 bytes or more): it is kept for as long as
    /// the book.
    private mutating func finish(id: BookID, version: Int, createdAt: Int64, updatedAt: Int64, rating: Int, genre: Genre) {
        bytes.withUnsafeMutableBytes { header in
            header.storeBytes(of: id.high, toByteOffset: Self.idOffset, as: UInt64.self)
            header.storeBytes(of: id.low, toByteOffset: Self.idOffset + 8, as: UInt64.self)
            header.storeBytes(of: Int64(version), toByteOffset: 0, as: Int64.self)
            header.storeBytes(of: createdAt, toByteOffset: 8, as: Int64.self)
            header.storeBytes(of: updatedAt, toByteOffset: 16, as: Int64.self)
            header.storeBytes(of: Int64(rating), toByteOffset: 24, as: Int64.self)
        }
        bytes[Self.genreOffset] = UInt8(Genre.allCases.firstIndex(of: genre)!)
        storeKeyIfNeeded(.titleKey, of: .title)
        storeKeyIfNeeded(.authorKey, of: .author)
        let count = bytes.count
        // A book packed from a `Book` reserved what it takes (unless a sort key was stored),
        // and malloc rounds to 16 bytes anyway: copying it again cost an allocation a write.
        guard bytes.capacity - count >= 16 else { return }
        bytes = bytes.withUnsafeBufferPointer { packed in
            [UInt8](unsafeUninitializedCapacity: count) { exact, initialized in
                initialized = exact.initialize(fromContentsOf: packed)
            }
        }
    }

    private mutating func storeKeyIfNeeded(_ key: Text, of text: Text) {
        guard !TextSortKey.derives(from: bytes[range(of: text)]) else {
            bytes[Self.derivedKeysOffset] |= Self.derivedBit(key)
            return
        }
        let stored = TextSortKey(self.text(text)).bytes
        bytes.append(contentsOf: stored)
        setLength(stored.count, of: key)
    }

    /// The book's id.
    var id: BookID { BookID(high: UInt64(bitPattern: integer(at: Self.idOffset)), low: UInt64(bitPattern: integer(at: Self.idOffset + 8))) }
    var version: Int { Int(integer(at: 0)) }
    var createdAt: Int64 { integer(at: 8) }
    var rating: Int { Int(integer(at: 24)) }
    var genre: Genre { Genre.allCases[Int(bytes[Self.genreOffset])] }
    var author: String { text(.author) }

    /// The whole book, with its learner.
    func book(learner: String) -> Book {
        Book(
            id: idText, learner: learner, title: text(.title), author: text(.author), genre: genre, rating: rating,
            review: text(.review), version: version, createdAt: createdAt, updatedAt: integer(at: 16))
    }

    /// Calls `body` with the book's fields (its id's as the journal spelled it) read straight
    /// from the buffer: what a read writes its reply from.
    func withFields<R>(_ body: (BookFields) -> R) -> R {
        bytes.withUnsafeBufferPointer { bytes in
            func text(_ text: Text) -> UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(rebasing: bytes[range(of: text)]) }
            func fields(id: UnsafeBufferPointer<UInt8>) -> R {
                body(BookFields(
                    id: id, title: text(.title), author: text(.author), genre: genre, rating: rating, review: text(.review),
                    version: version, createdAt: createdAt, updatedAt: integer(at: 16)))
            }
            return length(of: .id) == 0 ? self.id.withText(fields) : fields(id: text(.id))
        }
    }

    /// The bytes of the texts that `withFields` lends, for sizing a buffer to write them into.
    var textByteCount: Int { bytes.count - Self.headerBytes }

    /// The id as the journal spelled it: the lowercase text of `id` unless it came otherwise.
    var idText: String { length(of: .id) == 0 ? id.text : text(.id) }

    /// The title's sort key.
    var titleKey: TextSortKey { sortKey(.titleKey, of: .title) }
    /// The author's sort key.
    var authorKey: TextSortKey { sortKey(.authorKey, of: .author) }

    private func sortKey(_ key: Text, of text: Text) -> TextSortKey {
        if length(of: key) > 0 { return TextSortKey(bytes: Array(bytes[range(of: key)])) }
        // Nothing stored: the key derives from the text, or it is empty.
        return TextSortKey(derivedFrom: bytes[range(of: text)]) ?? TextSortKey(bytes: [])
    }

    private static func derivedBit(_ key: Text) -> UInt8 { key == .titleKey ? 1 : 2 }

    /// Calls `body` with the sort key of `sort` (title or author) as it is compared, read in
    /// place: the stored key, or the text's first `TextSortKey.maxBytes` bytes to be lowercased.
    /// An index compares keys O(log n) times per insert and seek, so no key is built for it.
    private func withKey<R>(_ sort: BookSortKey, _ body: (SortKeyBytes) -> R) -> R {
        let (key, text): (Text, Text) = sort == .title ? (.titleKey, .title) : (.authorKey, .author)
        return bytes.withUnsafeBufferPointer { buffer in
            if buffer[Self.derivedKeysOffset] & Self.derivedBit(key) != 0 {
                let range = range(of: text)
                let derived = range.lowerBound..<min(range.upperBound, range.lowerBound + TextSortKey.maxBytes)
                return body(SortKeyBytes(bytes: UnsafeBufferPointer(rebasing: buffer[derived]), lowercases: true))
            }
            return body(SortKeyBytes(bytes: UnsafeBufferPointer(rebasing: buffer[range(of: key)]), lowercases: false))
        }
    }

    /// How this book compares with `position` in the order of `sort`: below zero before it,
    /// zero at it, above zero after it. Ties of the sort value go by id.
    func compare(to position: BookPosition, by sort: BookSortKey) -> Int {
        let byValue: Int
        switch (sort, position.value) {
        case (.rating, .number(let rating)): byValue = Self.compare(Int64(self.rating), Int64(rating))
        case (.created, .number(let created)): byValue = Self.compare(createdAt, Int64(created))
        case (.title, .text(let key)), (.author, .text(let key)):
            byValue = key.bytes.withUnsafeBufferPointer { key in
                withKey(sort) { $0.compare(to: SortKeyBytes(bytes: key, lowercases: false)) }
            }
        default: preconditionFailure("a position of another sort")
        }
        return byValue != 0 ? byValue : id.compare(to: position.id)
    }

    /// Whether this book comes before `other` in the order of `sort` (ties by id): the order
    /// of a learner's index for `sort`.
    func precedes(_ other: StoredBook, by sort: BookSortKey) -> Bool {
        let byValue: Int = switch sort {
        case .rating: Self.compare(Int64(rating), Int64(other.rating))
        case .created: Self.compare(createdAt, other.createdAt)
        case .title, .author: withKey(sort) { mine in other.withKey(sort) { mine.compare(to: $0) } }
        }
        return byValue != 0 ? byValue < 0 : id.compare(to: other.id) < 0
    }

    /// The first sixteen bytes of the sort key of `sort` (title or author) as two big-endian
    /// numbers, zeros past a shorter key, and the key's length: keys whose pairs differ compare
    /// as their pairs; keys with equal pairs compare by length (a prefix first) when either is
    /// at most sixteen bytes, and are equal when both are and their lengths agree.
    func keyPrefix(_ sort: BookSortKey) -> (UInt64, UInt64, length: Int) {
        withKey(sort) { key in
            func word(_ start: Int) -> UInt64 {
                var word: UInt64 = 0
                for index in start..<(start + 8) {
                    let byte = index < key.bytes.count ? (key.lowercases ? SortKeyBytes.lowercase(key.bytes[index]) : key.bytes[index]) : 0
                    word = word << 8 | UInt64(byte)
                }
                return word
            }
            return (word(0), word(8), key.bytes.count)
        }
    }

    /// This book's place in the order of `sort`: what a cursor resumes after.
    func position(by sort: BookSortKey) -> BookPosition {
        let value: BookPosition.Value = switch sort {
        case .title: .text(titleKey)
        case .author: .text(authorKey)
        case .rating: .number(rating)
        case .created: .number(Int(createdAt))
        }
        return BookPosition(value: value, id: id, idText: idText)
    }

    /// Whether the author is `lowercased` once lowercased: the `author` filter of a list. ASCII
    /// authors are compared byte by byte, without making a `String` for each book looked at.
    func hasAuthor(lowercased: String) -> Bool {
        let range = range(of: .author)
        var query = lowercased
        let asciiMatch: Bool? = query.withUTF8 { query in
            bytes.withUnsafeBufferPointer { buffer in
                let author = UnsafeBufferPointer(rebasing: buffer[range])
                guard author.allSatisfy({ $0 < 0x80 }), query.allSatisfy({ $0 < 0x80 }) else { return nil }
                return author.count == query.count && zip(author, query).allSatisfy { SortKeyBytes.lowercase($0) == $1 }
            }
        }
        return asciiMatch ?? (author.lowercased() == lowercased)
    }

    /// The UTF-8 bytes of title, author and review: what a library's byte limit counts.
    var contentBytes: Int { length(of: .title) + length(of: .author) + length(of: .review) }

    private static func compare(_ lhs: Int64, _ rhs: Int64) -> Int { lhs < rhs ? -1 : lhs == rhs ? 0 : 1 }

    private func integer(at offset: Int) -> Int64 {
        bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: Int64.self) }
    }

    private func length(of text: Text) -> Int {
        Int(bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: Self.lengthsOffset + 4 * text.rawValue, as: UInt32.self) })
    }

    private mutating func append(_ text: String, as field: Text) {
        // Through the contiguous UTF-8, not `text.utf8`, which `append(contentsOf:)` walks
        // generically: about 500 instructions a field, four per create (issue 26).
        var text = text
        let count = text.withUTF8 { utf8 in
            bytes.append(contentsOf: utf8)
            return utf8.count
        }
        setLength(count, of: field)
    }

    private mutating func setLength(_ count: Int, of text: Text) {
        bytes.withUnsafeMutableBytes { $0.storeBytes(of: UInt32(count), toByteOffset: Self.lengthsOffset + 4 * text.rawValue, as: UInt32.self) }
    }

    private func range(of text: Text) -> Range<Int> {
        var start = Self.headerBytes
        for earlier in 0..<text.rawValue { start += length(of: Text(rawValue: earlier)!) }
        return start..<(start + length(of: text))
    }

    private func text(_ text: Text) -> String { String(decoding: bytes[range(of: text)], as: UTF8.self) }
}
