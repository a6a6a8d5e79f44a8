/// A request as ``HTTPLoop`` read it: the request line and the headers, nothing of a body
/// (the endpoints answer `GET` only). Parsing never fails: what cannot be read leaves
/// ``isWellFormed`` false, and the responder answers `400`.
public struct HTTPRequest: Sendable {
    /// `GET`, `POST`, …; empty when the request line has none.
    public let method: String
    /// The target's path, e.g. `/events`.
    public let path: String
    /// The target's query parameters, percent-decoded, the first of each name.
    public let query: [String: String]
    /// The headers by lowercased name, the first of each name.
    public let headers: [String: String]
    /// Whether the request line had a method, a target starting with `/` and an HTTP version.
    public let isWellFormed: Bool

    /// The request in `bytes`: its line and headers, up to the empty line or the end.
    public init(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false).makeIterator()
        let requestLine = (lines.next() ?? "").split(separator: " ", omittingEmptySubsequences: false)
        method = requestLine.first.map(String.init) ?? ""
        let target = requestLine.count > 1 ? requestLine[1] : ""
        isWellFormed = requestLine.count == 3 && target.hasPrefix("/") && requestLine[2].hasPrefix("HTTP/")
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        path = parts.first.map(String.init) ?? ""
        var query: [String: String] = [:]
        for pair in (parts.count > 1 ? parts[1] : "").split(separator: "&") {
            let nameAndValue = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = Self.percentDecoded(nameAndValue[0])
            if query[name] == nil { query[name] = Self.percentDecoded(nameAndValue.count > 1 ? nameAndValue[1] : "") }
        }
        self.query = query
        var headers: [String: String] = [:]
        while let line = lines.next(), !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            if headers[name] == nil { headers[name] = line[line.index(after: colon)...].trimmingSpaces }
        }
        self.headers = headers
    }

    /// `text` with `+` as a space and each `%XX` as its byte; a malformed escape stays as written.
    private static func percentDecoded(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        var utf8 = Array(text.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "%"), utf8.count >= 2, let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16) {
                bytes.append(value)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs.
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
