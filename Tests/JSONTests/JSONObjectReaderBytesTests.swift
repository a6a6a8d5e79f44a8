import JSON
import Testing

/// A reader over an object's bytes (`JSONParser.objectReader`, how requests are read) must
/// behave exactly as a reader over the parsed tree: the same parse error at the same offset,
/// the same values, the same errors with the same JSONPaths, the same bytes to hash.
@Suite struct JSONObjectReaderBytesTests {
    let parser = JSONParser(maxBytes: 4096, maxDepth: 8)

    /// What one reader reports: each probe's value (or its error), the unknown-member error after
    /// reading every other probe, and the members in key order.
    private struct Observation: Equatable {
        var values: [String] = []
        var unknown: JSONReadError?
        var sorted: [UInt8] = []
    }

    private enum Outcome: Equatable {
        case notJSON(JSONParseError)
        case notAnObject(JSONReadError)
        case read(Observation)
    }

    static let probes = ["op", "a", "b", "K", "\u{212A}", "\u{E9}", "title", "rating", "missing", "x y", "\u{0}"]

    private func observe(_ reader: JSONObjectReader) -> Observation {
        var observation = Observation()
        var reader = reader
        for (index, key) in Self.probes.enumerated() {
            var copy = reader
            let shown: String
            do throws(JSONReadError) {
                switch index % 4 {
                case 0: shown = "\(try copy.optionalString(key, length: 1...3) as Any)"
                case 1: shown = "\(try copy.optionalInteger(key, in: -5...5) as Any)"
                case 2: shown = "\(try copy.optionalDouble(key, in: -1e300...1e300) as Any)"
                default: shown = "\(try copy.optionalArray(key).map { $0.map(\.path) } as Any)"
                }
            } catch {
                shown = "error \(error)"
            }
            observation.values.append(shown)
            if index % 2 == 0 { _ = reader.optionalValue(key) }
        }
        do throws(JSONReadError) { try reader.rejectUnknownMembers() } catch { observation.unknown = error }
        observation.sorted = reader.serializedInKeyOrder()
        return observation
    }

    private func throughTree(_ bytes: [UInt8]) -> Outcome {
        let value: JSONValue
        do throws(JSONParseError) { value = try parser.parse(bytes) } catch { return .notJSON(error) }
        do throws(JSONReadError) { return .read(observe(try JSONObjectReader(value))) } catch { return .notAnObject(error) }
    }

    private func throughBytes(_ bytes: [UInt8]) -> Outcome {
        let result: Result<JSONObjectReader, JSONReadError>
        do throws(JSONParseError) { result = try parser.objectReader(bytes) } catch { return .notJSON(error) }
        switch result {
        case .success(let reader): return .read(observe(reader))
        case .failure(let error): return .notAnObject(error)
        }
    }

    @Test(arguments: [
        // Duplicate members, also spelled differently: escapes, canonical equivalents.
        #"{"op":"create","op":"get"}"#, #"{"op":1,"\u006fp":2}"#, "{\"K\":1,\"\u{212A}\":2}", "{\"\u{E9}\":1,\"e\u{301}\":2}",
        // Members found by an escaped or canonically equivalent key.
        #"{"\u006fp":"get"}"#, "{\"\u{212A}\":\"k\"}", "{\"e\u{301}\":\"x\"}", #"{"\u0000":"nul"}"#,
        // Wrong types, nulls, ranges, unknown members named as errors show them.
        #"{"op":5,"a":"5","b":null,"title":true,"rating":[1]}"#, #"{"a":5.0,"b":-0,"title":"ab\"c"}"#,
        #"{"a":6,"b":1e400}"#, #"{"a":1e3,"b":9007199254740993,"rating":-9.5}"#, #"{"a":123456789012345678901234567890}"#,
        #"{"x y":1,"op":"a"}"#, #"{"a\nb":1}"#, "{\"\(String(repeating: "k", count: 300))\":1}", "{\"caf\u{E9}\":1}",
        // Escapes and text of every kind in values.
        #"{"op":"\ud83d\ude00","title":"tab\there","b":"\u00e9\/"}"#, "{\"op\":\"e\u{301}\",\"title\":\"\u{1F989}\u{1F989}\"}",
        // Nesting: within the limit, at it, past it; arrays of members.
        #"{"b":[{"a":1},{"a":1}],"a":{"a":{"a":1}}}"#, #"{"b":[[[[[[[1]]]]]]]}"#, #"{"b":[[[[[[[[1]]]]]]]]}"#,
        #"{"a":{"a":{"a":1,"a":2}}}"#,
        // Not an object, not JSON.
        "[1,2]", "\"op\"", "null", "5", "", " ", "{", "{\"op\":}", "{\"op\":\"a\",}", "{\"op\":\"a\"} x", "{\"op\" \"a\"}",
        "{\"op\":\"a\tb\"}", "{\"op\":\"\\x\"}", "{\"op\":\"\\ud800\"}", "{\"op\":01}", "{\"op\":nul}",
        "  {\"a\":1}  ", "{}",
    ])
    func readsAsTheTreeDoes(input: String) {
        let bytes = Array(input.utf8)
        #expect(throughBytes(bytes) == throughTree(bytes), "\(input)")
    }

    @Test func readsManyMembersAndHugeStringsAsTheTreeDoes() {
        let members = (0..<70).map { "\"k\($0)\":\($0)" }.joined(separator: ",")
        for input in ["{\(members)}", "{\(members),\"a\":1}", "{\"a\":1,\(members),\"\u{212A}\":1,\"K\":2}",
            "{\"title\":\"\(String(repeating: "\u{E9}", count: 1000))\"}"] {
            let bytes = Array(input.utf8)
            #expect(throughBytes(bytes) == throughTree(bytes))
        }
    }

    @Test func readsInvalidUTF8AndRandomBytesAsTheTreeDoes() {
        let invalid: [[UInt8]] = [
            [0x7B, 0x22, 0xC3, 0x28, 0x22, 0x3A, 0x31, 0x7D], [0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xED, 0xA0, 0x80, 0x22, 0x7D],
            [0xFF, 0xFE, 0x00, 0x01],
        ]
        for bytes in invalid { #expect(throughBytes(bytes) == throughTree(bytes), "\(bytes)") }
        var generator = SplitMix(seed: 19)
        let alphabet = Array(#"{}[]:,"\ntrufalse0123456789.eE+-\uaKbop"#.utf8) + [0x80, 0xA9, 0xC3, 0x00]
        for _ in 0..<20_000 {
            let length = Int(generator.next() % 30)
            let bytes = [UInt8(ascii: "{")] + (0..<length).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] }
            #expect(throughBytes(bytes) == throughTree(bytes), "\(bytes)")
        }
        // Objects of members drawn from pools, so that most parse: duplicates, escaped keys.
        let keys = [#""op""#, #""a""#, #""\u0061""#, #""b""#, "\"\u{212A}\"", #""K""#, #""title""#, #""z""#, #""x y""#]
        let values = [#""get""#, #""abcd""#, "1", "-3", "2.5", "1e2", "null", "true", "[1,\"a\"]", #"{"a":1}"#, #""\u00e9""#, "[]"]
        for _ in 0..<5_000 {
            let count = Int(generator.next() % 5)
            let members = (0..<count).map { _ in
                keys[Int(generator.next() % UInt64(keys.count))] + ":" + values[Int(generator.next() % UInt64(values.count))]
            }
            let bytes = Array("{\(members.joined(separator: ","))}".utf8)
            #expect(throughBytes(bytes) == throughTree(bytes), "\(String(decoding: bytes, as: UTF8.self))")
        }
    }
}
