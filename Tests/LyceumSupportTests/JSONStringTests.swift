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

    /// `append` skips eight bytes at a time while none needs escaping: every character that
    /// does, at every position of a string longer than one such word, and beside multi-byte
    /// characters, is escaped exactly as a byte-by-byte escaper escapes it.
    @Test func escapesAtEveryPositionOfLongStrings() {
        for special in ["\"", "\\", "\n", "\u{0}", "\u{1F}", "\t"] {
            for length in [7, 8, 9, 16, 17, 31] {
                for position in 0...length {
                    var characters = Array(repeating: "a", count: length)
                    characters.insert(special, at: position)
                    characters.insert("é", at: length / 2)
                    let text = characters.joined()
                    #expect(JSONString.quoted(text) == byteByByte(text), "\(text.debugDescription)")
                }
            }
        }
        // Bytes either side of the escaped ranges (0x1F/0x20, 0x21/0x22/0x23, 0x5B/0x5C/0x5D, 0x7F, 0xFF-led UTF-8).
        let edges = "\u{20}!#[]\u{7F}\u{FF}\u{10FFFF}" + String(repeating: "x", count: 9)
        #expect(JSONString.quoted(edges) == byteByByte(edges))
    }

    @Test func encodedLengthIsWhatAppendWrites() {
        for text in ["", "plain", "a\"b\\c\nd", "\u{0}\t\r\u{1F}", "é✓\u{1F600}"] {
            var output: [UInt8] = [0x7B]
            JSONString.append(text, to: &output)
            #expect(output.count - 1 == JSONString.encodedLength(of: text), "\(text.debugDescription)")
        }
    }

    /// The escaping `protocol/journal.md` fixes, one byte at a time.
    private func byteByByte(_ text: String) -> String {
        var output: [UInt8] = [UInt8(ascii: "\"")]
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): output += [UInt8(ascii: "\\"), byte]
            case 0x0A: output += Array("\\n".utf8)
            case ..<0x20: output += Array(("\\u00" + String(byte, radix: 16).leftPadded(to: 2)).utf8)
            default: output.append(byte)
            }
        }
        return String(decoding: output + [UInt8(ascii: "\"")], as: UTF8.self)
    }

    private func decoded(_ literal: String) throws -> String? {
        try JSONSerialization.jsonObject(with: Data(literal.utf8), options: .fragmentsAllowed) as? String
    }
}

private extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
