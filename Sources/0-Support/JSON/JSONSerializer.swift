import LyceumSupport

extension JSONValue {
    /// The compact UTF-8 serialization: no insignificant whitespace, members in order, strings
    /// escaped as ``JSONString`` does (control characters, `"` and `\`), every other character
    /// written as itself.
    public func serialized() -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(128)
        write(to: &output)
        return output
    }

    /// Appends the compact serialization to `output`.
    public func write(to output: inout [UInt8]) {
        switch self {
        case .null: output.append(utf8: "null")
        case .bool(let flag): if flag { output.append(utf8: "true") } else { output.append(utf8: "false") }
        case .integer(let number): JSONValue.write(number, to: &output)
        case .double(let number): output.append(contentsOf: number.description.utf8)
        case .string(let text): JSONValue.write(text, to: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                element.write(to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let object):
            output.append(UInt8(ascii: "{"))
            for (index, member) in object.members.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                JSONValue.write(member.key, to: &output)
                output.append(UInt8(ascii: ":"))
                member.value.write(to: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    /// Appends `number` in decimal.
    public static func write(_ number: Int, to output: inout [UInt8]) {
        if number < 0 { output.append(UInt8(ascii: "-")) }
        write(UInt64(number.magnitude), to: &output)
    }

    /// Appends `number` in decimal (the journal's sequence numbers are unsigned).
    public static func write(_ number: UInt64, to output: inout [UInt8]) {
        if number == 0 {
            output.append(UInt8(ascii: "0"))
            return
        }
        var magnitude = number
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
            UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        // Written from the end of the buffer backwards, then appended in one copy.
        withUnsafeMutableBytes(of: &digits) { raw in
            let buffer = raw.bindMemory(to: UInt8.self)
            var start = buffer.count
            while magnitude > 0 {
                start -= 1
                buffer[start] = UInt8(magnitude % 10) + UInt8(ascii: "0")
                magnitude /= 10
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[start...]))
        }
    }

    /// Appends `text` as a quoted, escaped JSON string, spelled as ``JSONString`` spells it.
    public static func write(_ text: String, to output: inout [UInt8]) {
        JSONString.append(text, to: &output)
    }
}
