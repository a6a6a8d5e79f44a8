import JSON

/// Turns one catalog file into courses, recognising its format by its shape:
/// - the course app's `courses.json`: an array of `{course_name, course_thumbnail, course_videos}`;
/// - the module app's `data.json`: an array of `{id, category, content, test}`;
/// - Lyceum's own format: `{"format": "lyceum-catalog", "version": 1, "courses": […]}`.
enum CatalogImporter {
    /// The largest catalog file accepted.
    static let maxFileBytes = 64 << 20

    static func courses(from bytes: [UInt8], file: String) throws(CatalogLoadError) -> [Course] {
        let document: JSONValue
        do {
            document = try JSONParser(maxBytes: maxFileBytes, maxDepth: 32).parse(bytes)
        } catch {
            throw CatalogLoadError(file: file, path: "$", offset: error.offset, message: "not valid JSON: \(error.code.rawValue)")
        }
        do throws(JSONReadError) {
            switch document {
            case .array(let elements):
                guard case .object(let first)? = elements.first else {
                    if elements.isEmpty { return [] }
                    throw JSONReadError(path: "$[0]", message: "expected an object, found \(elements[0].typeName)")
                }
                if first["course_name"] != nil { return try CourseAppFormat.courses(elements) }
                if first["content"] != nil || first["test"] != nil { return try ModuleAppFormat.courses(elements) }
                throw JSONReadError(
                    path: "$[0]", message: "is neither a course app course (course_name) nor a module app module (content, test)")
            case .object:
                return try LyceumCatalogFormat.courses(document)
            default:
                throw JSONReadError(path: "$", message: "expected a catalog array or object, found \(document.typeName)")
            }
        } catch {
            throw CatalogLoadError(file: file, path: error.path, message: error.message)
        }
    }
}

extension JSONObjectReader {
    /// A non-blank string member.
    mutating func text(_ key: String) throws(JSONReadError) -> String {
        let text = try string(key, length: 1...100_000)
        guard !text.allSatisfy(\.isWhitespace) else { throw JSONReadError(path: path(of: key), message: "must not be blank") }
        return text
    }

    /// An id member given as a string or an integer, as the apps write them.
    mutating func sourceID(_ key: String) throws(JSONReadError) -> String {
        switch try value(key) {
        case .integer(let number): return String(number)
        case .string(let text) where !text.isEmpty: return text
        case let other: throw JSONReadError(path: path(of: key), message: "expected a string or integer id, found \(other.typeName)")
        }
    }
}
