extension Array where Element == UInt8 {
    /// Appends the UTF-8 of `literal`, a string fixed at compile time (a JSON member's `,"key":`),
    /// as one copy of its bytes. `append(contentsOf: "…".utf8)` takes the generic sequence path,
    /// about 500 instructions an append, which was 6% of a book create's instructions (issue 26).
    @inlinable
    public mutating func append(utf8 literal: StaticString) {
        append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }
}
