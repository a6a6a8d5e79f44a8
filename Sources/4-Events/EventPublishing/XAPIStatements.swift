import EventSubscription
import Foundation
import JSON
import LyceumSupport
import Progress

/// How progress events become xAPI statements (protocol/events.md, "xAPI statements").
public struct XAPIOptions: Sendable {
    /// The IRL that learner accounts and activity ids live under, e.g. `https://lyceum.example.org`.
    public var base: String
    /// The fraction of correct answers from which a quiz submission is `passed` rather than `failed`.
    public var passingFraction: Double

    /// Options with this base and pass mark.
    public init(base: String = "https://lyceum.invalid", passingFraction: Double = 0.8) {
        self.base = base
        self.passingFraction = passingFraction
    }
}

/// The xAPI statements (actor, verb, object, result) that describe one progress event: one
/// statement, plus a `completed` statement for the course when the event completes it.
struct XAPIStatements {
    private static let verbs = "http://adlnet.gov/expapi/verbs/"
    private static let activities = "http://adlnet.gov/expapi/activities/"
    private static let progressExtension = "https://w3id.org/xapi/cmi5/result/extensions/progress"

    /// The statements' JSON bodies, in order.
    let bodies: [[UInt8]]

    init(_ event: ProgressEvent, revision: UInt64, source: EventSource, options: XAPIOptions) {
        let courseID = options.base + "/courses/" + Self.segment(event.course)
        let lessonID = event.lesson.map { courseID + "/lessons/" + Self.segment($0) }
        let percent: JSONValue = ["extensions": [JSONObject.Member(key: Self.progressExtension, value: .integer(event.summary.percent))].asObject]
        var statements: [(verb: String, object: (id: String, type: String), result: JSONValue?)] = []
        switch event.kind {
        case .lessonWatched:
            statements.append(("completed", (lessonID ?? courseID, "lesson"), ["completion": true]))
        case .lessonUnwatched, .positionSaved:
            statements.append(("progressed", (lessonID ?? courseID, "lesson"), percent))
        case .courseBegun:
            statements.append(("attempted", (courseID, "course"), nil))
        case .lessonOpened:
            statements.append(("experienced", (lessonID ?? courseID, "lesson"), nil))
        case .quizSubmitted:
            let attempt = event.attempt
            let scaled = attempt?.fraction ?? 0
            let passed = scaled >= options.passingFraction
            let score: JSONValue = [
                "raw": .integer(attempt?.score ?? 0), "min": 0, "max": .integer(attempt?.total ?? 0), "scaled": .double(scaled),
            ]
            statements.append((passed ? "passed" : "failed", (courseID + "/quiz", "assessment"), ["score": score, "success": .bool(passed), "completion": true]))
        }
        if event.completesCourse {
            statements.append(("completed", (courseID, "course"), ["completion": true]))
        }
        let actor: JSONValue = ["objectType": "Agent", "account": ["homePage": .string(options.base), "name": .string(event.learner)]]
        let timestamp = JSONValue.string(RFC3339.string(millisecondsSince1970: event.summary.updatedAt))
        let context: JSONValue = [
            "platform": "Lyceum",
            "extensions": [
                JSONObject.Member(key: options.base + "/xapi/source", value: .string(source.description)),
                JSONObject.Member(key: options.base + "/xapi/revision", value: .integer(Int(clamping: revision))),
            ].asObject,
        ]
        bodies = statements.enumerated().map { index, statement in
            var members = JSONObject()
            members.append("id", .string(Self.statementID(source: source, revision: revision, index: index)))
            members.append("actor", actor)
            members.append("verb", ["id": .string(Self.verbs + statement.verb), "display": ["en-US": .string(statement.verb)]])
            members.append("object", [
                "objectType": "Activity", "id": .string(statement.object.id),
                "definition": ["type": .string(Self.activities + statement.object.type)],
            ])
            if let result = statement.result { members.append("result", result) }
            members.append("timestamp", timestamp)
            members.append("context", context)
            return JSONValue.object(members).serialized()
        }
    }

    /// An id segment percent-encoded for an IRI path.
    private static func segment(_ id: String) -> String {
        let isUnreserved = id.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2D || byte == 0x2E || byte == 0x5F || byte == 0x7E
        }
        return isUnreserved ? id : id.addingPercentEncoding(withAllowedCharacters: unreserved) ?? id
    }

    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// A UUID (version 8, RFC 9562) made of the source, the revision and the statement's index,
    /// so that the same event always yields the same statement ids and an LRS can deduplicate.
    static func statementID(source: EventSource, revision: UInt64, index: Int) -> String {
        var hasher = FNV1a()
        hasher.add(source.description)
        var bytes = withUnsafeBytes(of: (hasher.value.bigEndian, (revision << 8 | UInt64(index & 0xFF)).bigEndian)) { Array($0) }
        bytes[6] = bytes[6] & 0x0F | 0x80
        bytes[8] = bytes[8] & 0x3F | 0x80
        let hex = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for (position, byte) in bytes.enumerated() {
            if [4, 6, 8, 10].contains(position) { text.append(UInt8(ascii: "-")) }
            text.append(hex[Int(byte >> 4)])
            text.append(hex[Int(byte & 0xF)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}

/// 64-bit FNV-1a: a stable hash (Swift's `Hasher` is seeded per process).
private struct FNV1a {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func add(_ text: String) {
        for byte in text.utf8 { value = (value ^ UInt64(byte)) &* 0x100_0000_01b3 }
    }
}

extension [JSONObject.Member] {
    /// These members as a JSON object, for keys that are not literals.
    fileprivate var asObject: JSONValue { .object(JSONObject(self)) }
}
