/// How much of each stored value `Journal.append(_:checking:)` verifies before writing it.
///
/// A value that is not one well-formed JSON object would make its line unreadable, and replay
/// would stop there; so values from outside the process are parsed in full. Values a service
/// serialized itself from typed fields (Swift strings are valid UTF-8, and the JSON writers
/// escape every control character) are well-formed by construction, and parsing each one again
/// was a tenth of a durable create's instructions.
public enum ValueCheck: Sendable {
    /// Parse every value exactly as replay will read it (the default).
    case full
    /// Check only what a line's framing depends on: an object's braces and no raw newline.
    /// For values the caller's own JSON writer made; debug builds still parse them in full.
    case framing
}
