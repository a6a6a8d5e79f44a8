/// Why a books operation was refused. Nothing changes when one is thrown.
public struct BookError: Error, Sendable, Equatable {
    /// The named reasons.
    public enum Code: Sendable, Equatable {
        /// A field's value breaks a rule; `field` names it.
        case invalidField
        /// No book with that id in the learner's library.
        case notFound
        /// The caller's expected version is not the stored one.
        case versionConflict
        /// The write would take the library past one of its `LibraryLimits`; the message names it.
        case limitExceeded
    }

    /// Which rule was broken.
    public let code: Code
    /// The request field at fault (wire name, e.g. `title`), when one is.
    public let field: String?
    /// A sentence for the user.
    public let message: String

    /// An error with `code`, the field at fault if any, and a sentence.
    public init(_ code: Code, field: String? = nil, _ message: String) {
        self.code = code
        self.field = field
        self.message = message
    }
}
