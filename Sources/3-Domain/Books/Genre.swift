/// The genres a book may have; the raw value is the wire spelling.
public enum Genre: String, Sendable, CaseIterable, Comparable {
    case fantasy = "Fantasy"
    case horror = "Horror"
    case kids = "Kids"
    case mystery = "Mystery"
    case poetry = "Poetry"
    case romance = "Romance"
    case thriller = "Thriller"

    /// Alphabetical by wire spelling.
    public static func < (lhs: Genre, rhs: Genre) -> Bool { lhs.rawValue < rhs.rawValue }
}
