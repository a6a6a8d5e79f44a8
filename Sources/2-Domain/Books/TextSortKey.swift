import Foundation

/// What title and author sorting compares: the text with case and diacritics folded, in NFC,
/// as at most `maxBytes` UTF-8 bytes. Computed once when a book is stored, so that a list sorts
/// with cheap byte comparisons of bounded keys instead of folding every book and comparing
/// Unicode strings on every request. Byte order of NFC UTF-8 is the order Swift's `String`
/// comparison gives the same folded text, so lists keep the order they had; texts that agree
/// on their first `maxBytes` bytes tie and are ordered by id.
struct TextSortKey: Comparable, Sendable {
    /// The longest key: more than any title of 200 Latin, Cyrillic or Greek characters folds to.
    static let maxBytes = 512

    let bytes: [UInt8]

    init(bytes: [UInt8]) { self.bytes = bytes }

    /// The key of `text` ("Émile" and "emile" get the same key).
    init(_ text: String) {
        // ASCII, the common case, needs no Foundation: lowercase the bytes in one pass over the
        // contiguous UTF-8 (replay computes a key for every book). An ASCII head of `maxBytes`
        // is the whole key whatever follows it.
        var contiguous = text
        let ascii = contiguous.withUTF8 { utf8 -> [UInt8]? in
            let head = UnsafeBufferPointer(rebasing: utf8.prefix(Self.maxBytes))
            guard head.allSatisfy({ $0 < 0x80 }) else { return nil }
            return [UInt8](unsafeUninitializedCapacity: head.count) { buffer, initialized in
                for (index, byte) in head.enumerated() { buffer[index] = byte &- 0x41 < 26 ? byte | 0x20 : byte }
                initialized = head.count
            }
        }
        if let ascii {
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

    static func < (lhs: TextSortKey, rhs: TextSortKey) -> Bool { lhs.bytes.lexicographicallyPrecedes(rhs.bytes) }
}
