import JSON
import Testing

@Suite("JSONObjectWriter")
struct JSONObjectWriterTests {
    @Test("writes the same bytes as serializing the JSONValue of the same members")
    func sameBytesAsJSONValue() {
        var writer = JSONObjectWriter(reservingCapacity: 8)
        writer.member("n", -42)
        writer.member("text", "quote \" backslash \\ newline \n tab \t bell \u{7} é")
        writer.member("absent", nil as String?)
        writer.member("present", "x" as String?)
        writer.member("flag", false)
        writer.member("value", ["a": [1, 2.5, nil], "b": true])
        writer.member("nested") { nested in
            nested.member("inner") { $0.member("deep", 1) }
            nested.member("empty") { _ in }
        }
        writer.member("list", objects: [1, 2]) { object, number in object.member("i", number) }
        writer.member("none", objects: [Int]()) { object, number in object.member("i", number) }
        let expected: JSONValue = [
            "n": -42, "text": "quote \" backslash \\ newline \n tab \t bell \u{7} é", "absent": nil, "present": "x", "flag": false,
            "value": ["a": [1, 2.5, nil], "b": true], "nested": ["inner": ["deep": 1], "empty": [:]],
            "list": [["i": 1], ["i": 2]], "none": [],
        ]
        #expect(writer.finish() == expected.serialized())
    }

    @Test("an object with no members is {}")
    func emptyObject() {
        #expect(JSONObjectWriter().finish() == Array("{}".utf8))
    }
}
