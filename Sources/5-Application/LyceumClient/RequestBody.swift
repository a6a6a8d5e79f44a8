import JSON

/// A request's one JSON frame: `op` and the operation's parameters, written straight into bytes
/// with the project's JSON serializer. Parameters that are `nil` are left out, since the contract
/// refuses unknown members but takes absent optional ones.
struct RequestBody {
    let op: String
    let parameters: [(name: String, value: JSONValue?)]

    /// The frame's bytes.
    func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(128)
        bytes.append(contentsOf: #"{"op":"#.utf8)
        JSONValue.write(op, to: &bytes)
        for case (let name, let value?) in parameters {
            bytes.append(UInt8(ascii: ","))
            JSONValue.write(name, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
            value.write(to: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }
}

extension JSONValue {
    /// A request's number: a non-finite one, which JSON cannot spell, is sent as `null`, which
    /// the server refuses as a bad request naming the member.
    static func number(_ value: Double) -> JSONValue { value.isFinite ? .double(value) : .null }

    /// A request's array of integers.
    static func integers(_ values: [Int]) -> JSONValue { .array(values.map(JSONValue.integer)) }
}

extension Optional<String> {
    /// The parameter of an optional string: absent when `nil`.
    var parameter: JSONValue? { map(JSONValue.string) }
}

extension Optional<Int> {
    /// The parameter of an optional integer: absent when `nil`.
    var parameter: JSONValue? { map(JSONValue.integer) }
}
