import LearningServices
import Testing

/// The next page's request that a streamed reply asks for (protocol/majordomo.md, "Streamed
/// replies"): the same request with the page's `next_cursor` as its `cursor`, and nothing for
/// anything that is not a successful page with more to come.
@Suite struct ListContinuationTests {
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test func aPageWithMoreToComeAsksForTheNextWithItsCursorReplacingTheOld() {
        let request = Self.bytes(#"{"op":"list","learner":"ada","cursor":"old","limit":10}"#)
        let reply = Self.bytes(#"{"ok":true,"result":{"books":[],"next_cursor":"c2"}}"#)
        #expect(ListContinuation.nextRequest(after: reply, to: request)
                == Self.bytes(#"{"op":"list","learner":"ada","limit":10,"cursor":"c2"}"#))
    }

    @Test(arguments: [
        #"{"ok":true,"result":{"books":[],"next_cursor":null}}"#,                    // the last page
        #"{"ok":true,"result":{"book":{"title":"next_cursor"}}}"#,                   // no page
        #"{"ok":false,"error":{"code":"bad_request","message":"\"next_cursor\":\""}}"#, // a failure
        #"{"ok":true,"result":{"books":[],"next_cursor":"c2"#,                       // cut short
    ])
    func anythingElseAsksForNothing(_ reply: String) {
        #expect(ListContinuation.nextRequest(after: Self.bytes(reply), to: Self.bytes(#"{"op":"list","learner":"ada"}"#)) == nil)
    }

    @Test func aRequestThatIsNoObjectAsksForNothing() {
        let reply = Self.bytes(#"{"ok":true,"result":{"books":[],"next_cursor":"c2"}}"#)
        #expect(ListContinuation.nextRequest(after: reply, to: Self.bytes("[1]")) == nil)
    }
}
