import Foundation

/// What title and author sorting compares: the text with case and diacritics folded, in NFC,
/// as at most `maxBytes` UTF-8 bytes. Computed once when a book is stored (or, for ASCII,
/// derived by lowercasing its bytes), so that a list sorts with cheap byte comparisons of
/// bounded keys instead of folding every book and comparing Unicode strings on every request. Byte order of NFC UTF-8 is the order Swift's `String`
/// comparison gives the same folded text, so lists keep the order they had; texts that agree
/// on their first `maxBytes` bytes tie and are ordered by id.
struct TextSortKey: Comparable, Sendable {
    /// The longest key: more than any title of 200 Latin, Cyrillic or Greek characters folds to.
    static let maxBytes = 512

    let bytes: [UInt8]

    init(bytes: [UInt8]) { self.bytes = bytes }

    /// The key of `text` ("Émile" and "emile" get the same key).
    init(_ text: String) {
        var contiguous = text
        if let ascii = contiguous.withUTF8({ Self.asciiKey(UnsafeBufferPointer(rebasing: $0.prefix(Self.maxBytes))) }) {
            bytes = ascii
            return
        }
        // Only a bounded head is folded; folding removes combining marks, hence the margin.
        let head = String(String.UnicodeScalarView(text.unicodeScalars.prefix(4 * Self.maxBytes)))
        let folded = head.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil).precomposedStringWithCanonicalMapping
        var key: [UInt8] = []
        for scalar in folded.unicodeScalars {
            let encoded = Array(String(scalar).utf8)
            guard key.count + encoded.count <= Self.maxBytes else { break }
            key.append(contentsOf: encoded)
        }
        bytes = key
    }

    /// The key of a text whose UTF-8 is `utf8`, when `derives(from:)` says it need not be kept.
    init?(derivedFrom utf8: ArraySlice<UInt8>) {
        guard Self.derives(from: utf8) else { return nil }
        bytes = utf8.withUnsafeBufferPointer { Self.asciiKey(UnsafeBufferPointer(rebasing: $0.prefix(Self.maxBytes)))! }
    }

    /// Whether the key of a text whose UTF-8 is `utf8` can be rebuilt from the text alone and
    /// cheaply: a text whose first `maxBytes` bytes are ASCII has them lowercased as its key,
    /// whatever follows them. A store of many texts keeps only the other keys.
    static func derives(from utf8: ArraySlice<UInt8>) -> Bool {
        utf8.prefix(maxBytes).allSatisfy { $0 < 0x80 }
    }

    // ASCII, the common case, needs no Foundation: lowercase the bytes in one pass (a list by
    // title or author derives a key for every ASCII book).
    private static func asciiKey(_ head: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard head.allSatisfy({ $0 < 0x80 }) else { return nil }
        return [UInt8](unsafeUninitializedCapacity: head.count) { buffer, initialized in
            for (index, byte) in head.enumerated() { buffer[index] = SortKeyBytes.lowercase(byte) }
            initialized = head.count
        }
    }

    static func < (lhs: TextSortKey, rhs: TextSortKey) -> Bool { lhs.bytes.lexicographicallyPrecedes(rhs.bytes) }
}

/// A sort key's bytes as an index compares them, lent in place by a stored book or a cursor:
/// either the key itself or, for an ASCII text, the text's bytes to be lowercased one by one
/// (what `TextSortKey(derivedFrom:)` would build).
struct SortKeyBytes {
    let bytes: UnsafeBufferPointer<UInt8>
    /// Whether each byte is lowercased as it is compared.
    let lowercases: Bool

    /// `byte` lowercased when it is an ASCII capital letter.
    static func lowercase(_ byte: UInt8) -> UInt8 { byte &- 0x41 < 26 ? byte | 0x20 : byte }

    /// Below zero, zero or above zero as these bytes come before, equal or after `other`'s in
    /// `TextSortKey`'s order (bytes compared as unsigned, a prefix first).
    func compare(to other: SortKeyBytes) -> Int {
        for index in 0..<min(bytes.count, other.bytes.count) {
            let mine = lowercases ? Self.lowercase(bytes[index]) : bytes[index]
            let theirs = other.lowercases ? Self.lowercase(other.bytes[index]) : other.bytes[index]
            if mine != theirs { return mine < theirs ? -1 : 1 }
        }
        return bytes.count == other.bytes.count ? 0 : bytes.count < other.bytes.count ? -1 : 1
    }
}
