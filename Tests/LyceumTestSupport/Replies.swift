import Foundation
import Testing

/// Parses a reply frame as a JSON object.
public func parse(_ frame: [UInt8]) throws -> [String: Any] {
    let object = try JSONSerialization.jsonObject(with: Data(frame))
    return try #require(object as? [String: Any], "the reply is not a JSON object: \(String(decoding: frame, as: UTF8.self))")
}

extension Dictionary where Key == String, Value == Any {
    /// Whether this reply is `{"ok": true, …}`.
    public var isOK: Bool { self["ok"] as? Bool == true }
    /// The `result` of a success reply.
    public var result: [String: Any] { self["result"] as? [String: Any] ?? [:] }
    /// The `error.code` of an error reply.
    public var errorCode: String? { (self["error"] as? [String: Any])?["code"] as? String }
}
