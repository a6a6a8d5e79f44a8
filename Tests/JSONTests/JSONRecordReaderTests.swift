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

    @Test(arguments: [
        #"{"count":1,"name":"a"}"#, #"{"name":"a"}"#, #"{"name":"a","count":1,"extra":2}"#, #"{"name":"a","count":1.5}"#,
        #"{"name":1,"count":1}"#, #"{ "name":"a","count":1}"#, #"{"name":"a","count":1}x"#, #"{"name":"a"#, "", "{",
        #"{"name":"\ud800","count":1}"#,
    ])
    func returnsNilForAnyOtherShape(text: String) {
        #expect(read(text) == nil)
    }
}
