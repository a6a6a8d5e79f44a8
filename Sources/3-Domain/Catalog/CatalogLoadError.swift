/// Why a catalog file was refused: the file, the JSONPath of the problem and what it is.
public struct CatalogLoadError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file's path as given.
    public let file: String
    /// JSONPath of the offending value, `$` for the document as a whole.
    public let path: String
    /// Byte offset of a syntax error, when the file is not JSON at all.
    public let offset: Int?
    /// What is wrong, for people.
    public let message: String

    /// An error about `file` at JSONPath `path` (and byte `offset` for syntax errors).
    public init(file: String, path: String, offset: Int? = nil, message: String) {
        self.file = file
        self.path = path
        self.offset = offset
        self.message = message
    }

    /// `file: path: message`, or `file: byte N: message` for syntax errors.
    public var description: String {
        let location = offset.map { "\(file): byte \($0)" } ?? "\(file): \(path)"
        return "\(location): \(message)"
    }
}
