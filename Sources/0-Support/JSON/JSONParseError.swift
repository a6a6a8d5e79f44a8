/// Why a byte sequence is not acceptable JSON, and where the problem starts.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The named reasons a parse fails.
    public enum Code: String, Sendable {
        case unexpectedEnd = "unexpected end of input"
        case unexpectedByte = "unexpected byte"
        case invalidNumber = "invalid number"
        case numberOutOfRange = "number out of range"
        case invalidEscape = "invalid escape sequence"
        case invalidUTF8 = "invalid UTF-8"
        case controlCharacterInString = "unescaped control character in string"
        case duplicateKey = "duplicate object key"
        case trailingContent = "content after the JSON value"
        case tooDeep = "nesting too deep"
        case tooLarge = "input too large"
    }

    /// What went wrong.
    public let code: Code
    /// Byte offset of the problem from the start of the input.
    public let offset: Int

    /// An error `code` at byte `offset`.
    public init(_ code: Code, at offset: Int) {
        self.code = code
        self.offset = offset
    }

    /// `<reason> at byte <offset>`.
    public var description: String { "\(code.rawValue) at byte \(offset)" }
}
