/// A JSON document that parsed but does not have the expected shape; `path` names the offending
/// member in JSONPath notation, e.g. `$.course_videos[2].video_link`.
public struct JSONReadError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The JSONPath of the offending value.
    public let path: String
    /// What is wrong with it.
    public let message: String

    /// An error at JSONPath `path`.
    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    /// `path: message`.
    public var description: String { "\(path): \(message)" }
}
