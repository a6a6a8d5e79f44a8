/// Why a load test could not start or run, with the option, endpoint or service involved.
public struct LoadTestError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, named so that callers can act on it.
    public struct Code: RawRepresentable, Hashable, Sendable {
        /// A short stable name.
        public let rawValue: String
        /// Wraps a name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// A command-line option or configuration value is missing or out of range.
        public static let invalidOption = Code(rawValue: "invalid_option")
        /// The server could not be prepared for the run (catalog discovery, setup writes).
        public static let setupFailed = Code(rawValue: "setup_failed")
        /// A file (results, chart) could not be read or written.
        public static let file = Code(rawValue: "file")
    }

    /// What went wrong.
    public let code: Code
    /// The option at fault, such as `--rate`.
    public let option: String?
    /// The file involved.
    public let path: String?
    /// A sentence for a person.
    public let detail: String

    /// Creates an error.
    public init(code: Code, option: String? = nil, path: String? = nil, detail: String) {
        self.code = code
        self.option = option
        self.path = path
        self.detail = detail
    }

    /// `code [option] [path]: detail`.
    public var description: String {
        var text = code.rawValue
        if let option { text += " option=\(option)" }
        if let path { text += " path=\(path)" }
        return text + ": " + detail
    }
}
