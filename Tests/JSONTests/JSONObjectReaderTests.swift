import JSON
import Testing

@Suite struct JSONObjectReaderTests {
    @Test func readsTypedMembersAndNamesTheOffendingPath() throws {
        let value = try JSONParser().parse(#"{"title":"Dune","rating":4.0,"tags":[1,"x"],"meta":{"a b":true}}"#)
        var reader = try JSONObjectReader(value)
        #expect(try reader.string("title", length: 1...10) == "Dune")
        #expect(try reader.integer("rating", in: 1...5) == 4)
        #expect(try reader.array("tags").map(\.path) == ["$.tags[0]", "$.tags[1]"])
        let meta = try reader.object("meta")
        #expect(throws: JSONReadError(path: #"$.meta["a b"]"#, message: "is not a known field")) { try meta.rejectUnknownMembers() }
        #expect(throws: JSONReadError(path: "$.missing", message: "is required")) { try reader.string("missing") }
        #expect(throws: JSONReadError(path: "$.title", message: "must be at most 3 characters")) { try reader.string("title", length: 1...3) }
        #expect(throws: JSONReadError(path: "$.rating", message: "must be between 5 and 6")) { try reader.integer("rating", in: 5...6) }
        #expect(throws: JSONReadError(path: "$.title", message: "expected an integer, found string")) { try reader.integer("title") }
        try reader.rejectUnknownMembers()
    }

    @Test func countsCharactersNotBytesAndStopsPastTheLimit() {
        #expect(TextLimit.characterCount("", upTo: 5) == 0)
        #expect(TextLimit.characterCount("abc", upTo: 5) == 3)
        #expect(TextLimit.characterCount("e\u{301}🦉👩‍👩‍👧", upTo: 5) == 3)
        #expect(TextLimit.characterCount(String(repeating: "é", count: 1_000_000), upTo: 10) == 11)
        #expect(TextLimit.characterCount("abcdefghijkl", upTo: 10) == 11)
    }
}
