/// A book as the library holds it, packed (`StoredBook`): a read writes its reply from it
/// without unpacking it into a `Book`, whose `String` per field cost about 3k instructions a
/// read (issue 26).
public struct PackedBook: Sendable {
    let stored: StoredBook

    /// The bytes of its texts: what its JSON takes beyond a fixed size, unless they need escaping.
    public var textByteCount: Int { stored.textByteCount }

    /// Appends the contract's representation: the same bytes as `Book.writeJSON(to:)` for the
    /// same book.
    public func writeJSON(to output: inout [UInt8]) {
        stored.withFields { $0.writeJSON(to: &output) }
    }
}
