import JSON
import Testing

@Suite struct JSONRecordReaderTests {
    struct Pair: Equatable {
        let name: String
        let count: Int
    }

    func read(_ text: String) -> Pair? {
        JSONRecordReader.read(Array(text.utf8)) { reader in
            guard reader.member("name"), let name = reader.string(), reader.member("count"), let count = reader.integer() else { return nil }
            return Pair(name: name, count: count)
        }
    }

    @Test func readsMembersInTheExpectedOrder() {
        #expect(read(#"{"name":"Ἀθῆναι \"x\"","count":-42}"#) == Pair(name: "Ἀθῆναι \"x\"", count: -42))
    }

    /// Plain digits are read in place; every other spelling goes through the general parser,
    /// which reads or refuses it exactly as before.
    @Test func readsIntegersInEverySpellingTheParserTakes() {
        #expect(read(#"{"name":"a","count":0}"#) == Pair(name: "a", count: 0))
        #expect(read(#"{"name":"a","count":1796308283386}"#) == Pair(name: "a", count: 1_796_308_283_386))
        #expect(read(#"{"name":"a","count":999999999999999999}"#) == Pair(name: "a", count: 999_999_999_999_999_999))
        #expect(read(#"{"name":"a","count":9223372036854775807}"#) == Pair(name: "a", count: Int.max))
    }

    @Test(arguments: [
        #"{"name":"a","count":01}"#, #"{"name":"a","count":1e3}"#, #"{"name":"a","count":92233720368547758070}"#,
        #"{"name":"a","count":1 }"#, #"{"name":"a","count":"1"}"#, #"{"name":"a","count":}"#,
    ])
    func refusesWhatIsNoIntegerHere(text: String) {
        #expect(read(text) == nil)
    }

    @Test(arguments: [
        #"{"count":1,"name":"a"}"#, #"{"name":"a"}"#, #"{"name":"a","count":1,"extra":2}"#, #"{"name":"a","count":1.5}"#,
        #"{"name":1,"count":1}"#, #"{ "name":"a","count":1}"#, #"{"name":"a","count":1}x"#, #"{"name":"a"#, "", "{",
        #"{"name":"\ud800","count":1}"#,
    ])
    func returnsNilForAnyOtherShape(text: String) {
        #expect(read(text) == nil)
    }
}
