import JSON
import LyceumSupport
import Testing

/// `validate` must accept and reject exactly what `parse` does, with the same error and offset.
@Suite struct JSONValidationTests {
    let parser = JSONParser(maxBytes: 4096, maxDepth: 8)

    /// `nil` when `bytes` is accepted, else the error.
    private func parseError(_ bytes: [UInt8]) -> JSONParseError? {
        do throws(JSONParseError) { _ = try parser.parse(bytes); return nil } catch { return error }
    }

    private func validateError(_ bytes: [UInt8]) -> JSONParseError? {
        do throws(JSONParseError) { try parser.validate(bytes); return nil } catch { return error }
    }

    @Test(arguments: [
        #"{"b": [1, -2, 9007199254740993, 1.5e3, true, false, null], "a": "x\u00e9\n\ud83d\ude00"}"#,
        "{\"K\":1,\"\u{212A}\":2}",  // KELVIN SIGN is canonically "K": a duplicate key for String ==
        "{\"\u{E9}\":1,\"e\u{301}\":2}",  // NFC and NFD spellings of one key
        #"{"a":1,"\u0061":2}"#,
        #"[{"a":1},{"a":2}]"#,
        #"{"a":{"a":{"a":1}},"b":2}"#,
        "", "[1,]", "{\"a\":1,}", "01", "1.", "-", "1e400", "123456789012345678901234567890",
        "\"\\x\"", "\"\\ud800\"", "\"\\udc00\"", "\"a\tb\"", "true false", "nul", "NaN", "\"abc",
        "[[[[[[[[[1]]]]]]]]]", "[[[[[[[[1]]]]]]]]", "{\"a\":{\"b\":{\"c\":{\"d\":{\"e\":{\"f\":{\"g\":{\"h\":{}}}}}}}}}",
    ])
    func agreesWithParse(input: String) {
        let bytes = Array(input.utf8)
        #expect(validateError(bytes) == parseError(bytes), "\(input)")
    }

    @Test func agreesOnInvalidUTF8AroundEscapes() {
        let cases: [[UInt8]] = [
            [0x22, 0xC3, 0x28, 0x22],
            [0x22, 0xED, 0xA0, 0x80, 0x22],
            [0x22, 0xC3, 0x5C, 0x6E, 0xA9, 0x22],  // a lead byte and its continuation split by \n
            [0x22, 0x5C, 0x6E, 0xA9, 0x22],  // a stray continuation byte after an escape
            [0x22, 0xC3, 0xA9, 0x5C, 0x6E, 0xC3, 0xA9, 0x22],  // valid on both sides
            [0x22, 0xC3, 0x5C, 0x78, 0x22],  // bad UTF-8, then a bad escape: the escape is reported
            [0x22, 0xC3, 0x09, 0x22],  // bad UTF-8, then a control character
        ]
        for bytes in cases { #expect(validateError(bytes) == parseError(bytes), "\(bytes)") }
    }

    @Test func agreesOnDuplicatesAmongManyKeys() {
        let keys = (0..<40).map { "\"k\($0)\":\($0)" }
        let unique = Array("{\(keys.joined(separator: ","))}".utf8)
        let duplicated = Array("{\(keys.joined(separator: ",")),\"k3\":0}".utf8)
        #expect(validateError(unique) == nil)
        #expect(validateError(duplicated) == parseError(duplicated))
        #expect(validateError(duplicated) != nil)
        // Past 32 keys too, duplicates are found as Strings: KELVIN SIGN after "K", "\u0061" after "a".
        for (first, second) in [("K", "\u{212A}"), ("a", #"\u0061"#), ("\u{E9}", "e\u{301}")] {
            let bytes = Array("{\"\(first)\":0,\(keys.joined(separator: ",")),\"\(second)\":1}".utf8)
            #expect(validateError(bytes) == parseError(bytes), "\(first) \(second)")
            #expect(validateError(bytes)?.code == .duplicateKey)
        }
    }

    @Test func agreesOnRandomBytes() {
        var generator = SeededGenerator(seed: 11)
        let alphabet = Array(#"{}[]:,"\ntrufalse0123456789.eE+-\uaK"#.utf8) + [0x80, 0xA9, 0xC3, 0xFF, 0x00]
        for round in 0..<30_000 {
            let length = Int(generator.next() % 40)
            let bytes = (0..<length).map { _ in
                round.isMultiple(of: 3) ? UInt8(truncatingIfNeeded: generator.next())
                    : alphabet[Int(generator.next() % UInt64(alphabet.count))]
            }
            #expect(validateError(bytes) == parseError(bytes), "\(bytes)")
        }
    }
}
