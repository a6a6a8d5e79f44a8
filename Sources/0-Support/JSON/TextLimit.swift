/// How long a string may be, counted three ways. Characters (grapheme clusters) are the limit
/// people see and the one the contract states; Unicode scalars and UTF-8 bytes bound what the
/// string costs to store, sort and send, because one character may hold any number of scalars
/// (`"e"` followed by 30,000 combining accents is a 60 KB "one-character" string).
public struct TextLimit: Sendable, Equatable {
    /// How many characters are allowed.
    public let characters: ClosedRange<Int>
    /// The most Unicode scalars allowed.
    public let scalars: Int
    /// The most UTF-8 bytes allowed.
    public let bytes: Int

    /// Scalars allowed per character of the upper limit: room for accents stacked by
    /// decomposition and for emoji sequences, but not for unbounded combining marks.
    public static let scalarsPerCharacter = 4
    /// UTF-8 bytes allowed per character of the upper limit: two per allowed scalar, so text of
    /// 4-byte scalars (emoji) still has two of them per character.
    public static let bytesPerCharacter = 8

    /// `characters`, at most `scalarsPerCharacter` scalars and `bytesPerCharacter` bytes per
    /// character of its upper bound: the one rule every string field of the contract follows.
    public init(characters: ClosedRange<Int>) {
        self.characters = characters
        let (scalars, scalarOverflow) = characters.upperBound.multipliedReportingOverflow(by: Self.scalarsPerCharacter)
        let (bytes, byteOverflow) = characters.upperBound.multipliedReportingOverflow(by: Self.bytesPerCharacter)
        self.scalars = scalarOverflow ? Int.max : scalars
        self.bytes = byteOverflow ? Int.max : bytes
    }

    /// Why `text` breaks this limit, e.g. `must be at most 800 Unicode scalars`, or `nil` when
    /// it keeps it. Bytes are checked first (free for a native string), so a huge string costs
    /// no more than the byte limit to refuse.
    public func violation(of text: String) -> String? {
        let byteCount = text.utf8.count
        if byteCount > bytes { return "must be at most \(bytes) bytes of UTF-8" }
        // Every scalar and every character takes at least one byte, and a string of at least one
        // byte has at least one character: text within the character limit's bytes keeps every
        // bound but a lower one above 1 without walking it (every request field, every request).
        if byteCount <= characters.upperBound, characters.lowerBound <= min(byteCount, 1) { return nil }
        if byteCount > scalars, text.unicodeScalars.count > scalars { return "must be at most \(scalars) Unicode scalars" }
        let count = Self.characterCount(text, upTo: characters.upperBound)
        if characters.contains(count) { return nil }
        if characters.lowerBound == characters.upperBound { return "must be \(characters.lowerBound) characters" }
        if count > characters.upperBound { return "must be at most \(characters.upperBound) characters" }
        return characters.lowerBound == 1 ? "must not be empty" : "must be at least \(characters.lowerBound) characters"
    }

    /// The number of characters in `text`, or `limit + 1` when it has more than `limit`.
    /// Counting characters means finding grapheme boundaries, so the common case — fewer UTF-8
    /// bytes than the limit, hence fewer characters — is settled without it, and a huge string
    /// costs no more than the limit.
    public static func characterCount(_ text: String, upTo limit: Int) -> Int {
        let bytes = text.utf8.count
        if bytes <= 1 || (bytes <= limit && text.utf8.allSatisfy { $0 < 0x80 }) { return bytes }
        var count = 0
        for _ in text {
            count += 1
            if count > limit { break }
        }
        return count
    }
}
