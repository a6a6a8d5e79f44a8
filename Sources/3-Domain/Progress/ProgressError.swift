/// Why a progress operation was refused. Nothing changes when one is thrown.
public struct ProgressError: Error, Sendable, Equatable {
    /// The named reasons.
    public enum Code: Sendable, Equatable {
        /// The course, lesson or quiz does not exist; `field` names the reference.
        case notFound
        /// A value breaks a rule; `field` names it.
        case invalidField
    }

    /// Which rule was broken.
    public let code: Code
    /// The request field at fault in JSONPath form relative to the request, e.g. `answers[2]`.
    public let field: String
    /// What went wrong, for people.
    public let message: String

    /// An error with `code` about `field`.
    public init(_ code: Code, field: String, _ message: String) {
        self.code = code
        self.field = field
        self.message = message
    }
}
