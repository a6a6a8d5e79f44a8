import Foundation

/// A parameter's value in a request, as JSON.
enum Parameter: Encodable, Sendable {
    case string(String)
    case integer(Int)
    case number(Double)
    case integers([Int])

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .integers(let value): try container.encode(value)
        }
    }
}

/// A request's one JSON frame: `op` and the operation's parameters; parameters that are `nil`
/// are left out, since the contract refuses unknown members but takes absent optional ones.
struct RequestBody: Encodable {
    let op: String
    let parameters: [(name: String, value: Parameter?)]

    private struct Key: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(op, forKey: Key(stringValue: "op"))
        for (name, value) in parameters {
            if let value { try container.encode(value, forKey: Key(stringValue: name)) }
        }
    }

    /// The frame's bytes.
    func encoded() -> [UInt8] {
        // Strings, integers and finite numbers always encode; a non-finite position is sent
        // as null and refused by the server as a bad request.
        let encoder = JSONEncoder()
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return (try? Array(encoder.encode(self))) ?? Array(#"{"op":"\#(op)"}"#.utf8)
    }
}

extension Optional<String> {
    /// The parameter of an optional string.
    var parameter: Parameter? { map(Parameter.string) }
}

extension Optional<Int> {
    /// The parameter of an optional integer.
    var parameter: Parameter? { map(Parameter.integer) }
}
