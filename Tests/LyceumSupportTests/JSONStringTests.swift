import Foundation
import LyceumSupport
import Testing

@Suite struct JSONStringTests {
    @Test func escapesQuotesBackslashesAndEveryControlCharacter() {
        #expect(JSONString.quoted("plain é ✓") == "\"plain é ✓\"")
        #expect(JSONString.quoted("a\"b\\c\nd") == #""a\"b\\c\nd""#)
        #expect(JSONString.quoted("\u{0}\u{1}\t\r\u{1B}\u{1F} ") == #""\u0000\u0001\u0009\u000d\u001b\u001f ""#)
        // DEL and C1 controls are not JSON control characters: written as themselves.
        #expect(JSONString.quoted("\u{7F}\u{85}") == "\"\u{7F}\u{85}\"")
    }

    @Test func everyControlCharacterRoundTripsThroughAnIndependentParser() throws {
        let text = String(decoding: (0..<0x20).map { UInt8($0) } + Array("\"\\/ end".utf8), as: UTF8.self)
        try #expect(decoded(JSONString.quoted(text)) == text)
    }

    @Test func invalidUTF8BecomesReplacementCharactersThatStayValidJSON() throws {
        // A String cannot hold invalid UTF-8: decoding repairs it, and the escaper writes that.
        let repaired = String(decoding: [0x61, 0xFF, 0xC3, 0x28, 0xED, 0xA0, 0x80, 0x62] as [UInt8], as: UTF8.self)
        let literal = JSONString.quoted(repaired)
        #expect(String(validating: Array(literal.utf8), as: UTF8.self) != nil)
        try #expect(decoded(literal) == repaired)
        #expect(repaired.hasPrefix("a\u{FFFD}") && repaired.hasSuffix("b"))
    }

    @Test func encodedLengthIsWhatAppendWrites() {
        for text in ["", "plain", "a\"b\\c\nd", "\u{0}\t\r\u{1F}", "é✓\u{1F600}"] {
            var output: [UInt8] = [0x7B]
            JSONString.append(text, to: &output)
            #expect(output.count - 1 == JSONString.encodedLength(of: text), "\(text.debugDescription)")
        }
    }

    private func decoded(_ literal: String) throws -> String? {
        try JSONSerialization.jsonObject(with: Data(literal.utf8), options: .fragmentsAllowed) as? String
    }
}
