import JSON
import LyceumSupport
import Testing

@Suite struct JSONParserTests {
    let parser = JSONParser()

    @Test func parsesEveryKindOfValueKeepingOrderAndExactIntegers() throws {
        let value = try parser.parse(#" {"b": [1, -2, 9007199254740993, 1.5e3, true, false, null], "a": "x\u00e9\n\ud83d\ude00"} "#)
        let expected: JSONValue = [
            "b": [1, -2, .integer(9_007_199_254_740_993), 1500.0, true, false, nil],
            "a": "xé\n😀",
        ]
        #expect(value == expected)
        guard case .object(let object) = value else { Issue.record("not an object"); return }
        #expect(object.members.map(\.key) == ["b", "a"])
    }

    @Test func keepsUnicodeIntactThroughARoundTrip() throws {
        let text = "Ἀριστοτέλης — 学习 — 🦉 — e\u{301}"
        let bytes = JSONValue.string(text).serialized()
        #expect(String(decoding: bytes, as: UTF8.self) == "\"\(text)\"")
        #expect(try parser.parse(bytes) == .string(text))
    }

    /// Strings are scanned eight bytes at a time up to their first quote, backslash or control
    /// character: each of them at every position of strings longer than one such word, beside
    /// multi-byte characters, reads back what was written, and a raw control character is
    /// reported at its own offset.
    @Test func readsStringsWithSpecialCharactersAtEveryPosition() throws {
        for special in ["\"", "\\", "\n", "\u{1}", "\u{1F}"] {
            for length in [7, 8, 9, 15, 16, 17, 24] {
                for position in 0...length {
                    var characters = Array(repeating: "a", count: length)
                    characters.insert(special, at: position)
                    characters.insert("é", at: length / 2)
                    let text = characters.joined()
                    #expect(try parser.parse(JSONValue.string(text).serialized()) == .string(text), "\(text.debugDescription)")
                    // The same string unescaped: a control character is refused where it is.
                    guard special.unicodeScalars.first!.value < 0x20 else { continue }
                    let raw = Array(("\"" + text + "\"").utf8)
                    let offset = raw.firstIndex(where: { $0 < 0x20 })!
                    #expect(throws: JSONParseError(.controlCharacterInString, at: offset)) { try parser.parse(raw) }
                }
            }
        }
        #expect(try parser.parse(Array(#"{"key":"0123456789abcdef","k":"ab"}"#.utf8)) == ["key": "0123456789abcdef", "k": "ab"])
    }

    @Test func escapesControlCharacters() throws {
        let bytes = JSONValue.string("a\u{0}b\u{1f}\"\\\t\r\n").serialized()
        // Spelled as every Lyceum writer spells it (JSONString): only `\n` has a short form.
        #expect(String(decoding: bytes, as: UTF8.self) == #""a\u0000b\u001f\"\\\u0009\u000d\n""#)
        #expect(try parser.parse(bytes) == .string("a\u{0}b\u{1f}\"\\\t\r\n"))
    }

    @Test(arguments: [
        ("", JSONParseError.Code.unexpectedEnd, 0),
        ("[1,]", .unexpectedByte, 3),
        ("{\"a\":1,}", .unexpectedByte, 7),
        ("01", .invalidNumber, 0),
        ("1.", .invalidNumber, 2),
        ("-", .invalidNumber, 1),
        ("1e400", .numberOutOfRange, 0),
        ("\"\\x\"", .invalidEscape, 1),
        ("\"\\ud800\"", .invalidEscape, 1),
        ("\"a\tb\"", .controlCharacterInString, 2),
        ("{\"a\":1,\"a\":2}", .duplicateKey, 7),
        ("true false", .trailingContent, 5),
        ("nul", .unexpectedEnd, 3),
        ("NaN", .unexpectedByte, 0),
        ("// comment\n1", .unexpectedByte, 0),
        ("'single'", .unexpectedByte, 0),
    ])
    func rejectsNonStandardInputWithItsOffset(input: String, code: JSONParseError.Code, offset: Int) {
        #expect(throws: JSONParseError(code, at: offset)) { try parser.parse(input) }
    }

    @Test func rejectsInvalidUTF8() {
        #expect(throws: JSONParseError(.invalidUTF8, at: 1)) { try parser.parse([0x22, 0xC3, 0x28, 0x22]) }
        #expect(throws: JSONParseError(.invalidUTF8, at: 1)) { try parser.parse([0x22, 0xED, 0xA0, 0x80, 0x22]) }
    }

    @Test func enforcesDepthAndSizeLimits() throws {
        let limited = JSONParser(maxBytes: 100, maxDepth: 3)
        #expect(try limited.parse("[[[1]]]") == [[[1]]])
        #expect(throws: JSONParseError(.tooDeep, at: 3)) { try limited.parse("[[[[1]]]]") }
        #expect(throws: JSONParseError(.tooLarge, at: 100)) { try limited.parse(Array(repeating: 0x20, count: 101)) }
        let deep = String(repeating: "[", count: 100_000)
        #expect(throws: JSONParseError.self) { try parser.parse(deep) }
    }

    @Test func randomBytesNeverCrash() throws {
        var generator = SeededGenerator(seed: 5)
        let alphabet = Array(#"{}[]:,"\ntrufalse0123456789.eE+-\u"#.utf8) + [0x80, 0xC3, 0xFF, 0x00]
        for round in 0..<20_000 {
            let length = Int(generator.next() % 40)
            let bytes = (0..<length).map { _ in
                round.isMultiple(of: 2) ? UInt8(truncatingIfNeeded: generator.next())
                    : alphabet[Int(generator.next() % UInt64(alphabet.count))]
            }
            if case .success(let value) = Result(catching: { () throws(JSONParseError) in try parser.parse(bytes) }) {
                #expect(try parser.parse(value.serialized()) == value)
            }
        }
    }

    @Test func randomValuesRoundTrip() throws {
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<2_000 {
            let value = randomValue(&generator, depth: 0)
            #expect(try parser.parse(value.serialized()) == value)
        }
    }

    private func randomValue(_ generator: inout SeededGenerator, depth: Int) -> JSONValue {
        switch generator.next() % (depth > 3 ? 5 : 7) {
        case 0: return .null
        case 1: return .bool(generator.next() % 2 == 0)
        case 2: return .integer(Int(truncatingIfNeeded: generator.next()))
        case 3: return .double(Double(Int32(truncatingIfNeeded: generator.next())) / 64)
        case 4:
            let scalars = (0..<Int(generator.next() % 8)).compactMap { _ in Unicode.Scalar(UInt32(generator.next() % 0x2_0000)) }
            return .string(String(String.UnicodeScalarView(scalars)))
        case 5: return .array((0..<Int(generator.next() % 4)).map { _ in randomValue(&generator, depth: depth + 1) })
        default:
            var object = JSONObject()
            for index in 0..<Int(generator.next() % 4) { object.append("k\(index)", randomValue(&generator, depth: depth + 1)) }
            return .object(object)
        }
    }
}

