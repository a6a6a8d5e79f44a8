import JSON
import Journal
import LearningServices
import LearningServicesTestSupport
import Testing

/// The exact error replies (code, field, message) for malformed or ill-typed requests, as the
/// books service gave them when requests were parsed into a `JSONValue` tree (recorded from that
/// code): reading requests straight from their bytes (issue 19) must not change a byte of them.
@Suite struct RequestErrorTests {
    static let deep = String(repeating: "[", count: 17) + String(repeating: "]", count: 17)

    static let cases: [(request: String, reply: String)] = [
        (#"{"op":"create","learner":"ada","learner":"bob"}"#, #"{"ok":false,"error":{"code":"bad_request","message":"the request is not valid JSON: duplicate object key at byte 31"}}"#),
        (#"{"op":"get","\u006fp":"get"}"#, #"{"ok":false,"error":{"code":"bad_request","message":"the request is not valid JSON: duplicate object key at byte 12"}}"#),
        (#"{"op":5,"learner":"ada"}"#, #"{"ok":false,"error":{"code":"bad_request","message":"$.op expected a string, found number","field":"$.op"}}"#),
        (#"{"op":"get","learner":"ada","id":"x","color":1}"#, #"{"ok":false,"error":{"code":"bad_request","message":"$.color is not a known field","field":"$.color"}}"#),
        (#"{"op":"get","learner":"ada","id":"x","a\nb":1}"#, #"{"ok":false,"error":{"code":"bad_request","message":"$[\"a\\\\x0ab\"] is not a known field","field":"$[\"a\\\\x0ab\"]"}}"#),
        (#"{"op":"get","learner":"ada","id":"x","":1}"#, #"{"ok":false,"error":{"code":"bad_request","message":"$[\"\"] is not a known field","field":"$[\"\"]"}}"#),
        (#"{"op":"get","learner":"ada","id":"\u00e9\"x\t"}"#, #"{"ok":false,"error":{"code":"not_found","message":"no book é\"x\\x09 in the library of ada","field":"$.id"}}"#),
        (#"{"\u006fp":"get","learner":"a\u0064a","id":"x"}"#, #"{"ok":false,"error":{"code":"not_found","message":"no book x in the library of ada","field":"$.id"}}"#),
        (#"{"op":"get","learner":"a\u002fb","id":"x"}"#, #"{"ok":false,"error":{"code":"bad_request","message":"$.learner may contain only letters, digits and . _ - : @ +","field":"$.learner"}}"#),
        (#"{"op":"create","learner":"ada","title":"T","author":"A","genre":"Fantasy","rating":1e400}"#, #"{"ok":false,"error":{"code":"bad_request","message":"the request is not valid JSON: number out of range at byte 83"}}"#),
        (#"{"op":"create","learner":"ada","title":"T","author":"A","genre":"Fantasy","rating":123456789012345678901234567890}"#, #"{"ok":false,"error":{"code":"bad_request","message":"$.rating expected an integer, found number","field":"$.rating"}}"#),
        (#"{"op":"create","learner":"ada","title":"T","author":"A","genre":"Fantasy","rating":4.5}"#, #"{"ok":false,"error":{"code":"bad_request","message":"$.rating expected an integer, found number","field":"$.rating"}}"#),
        (#"{"op":"create","learner":"ada","title":"T","author":"A","genre":"Fantasy","rating":-1}"#, #"{"ok":false,"error":{"code":"bad_request","message":"$.rating must be between 1 and 5","field":"$.rating"}}"#),
        (#"{"op":"create","learner":"ada","title":null,"author":"A","genre":"Fantasy","rating":5}"#, #"{"ok":false,"error":{"code":"bad_request","message":"$.title is required","field":"$.title"}}"#),
        (#"{"op":"create","learner":"ada","title":"\#(String(repeating: "é", count: 201))","author":"A","genre":"Fantasy","rating":5}"#, #"{"ok":false,"error":{"code":"bad_request","message":"$.title must be at most 200 characters","field":"$.title"}}"#),
        (#"{"op":"get","learner":"ada","id":"x","deep":\#(deep)}"#, #"{"ok":false,"error":{"code":"bad_request","message":"the request is not valid JSON: nesting too deep at byte 59"}}"#),
        (#"{"op":"update","learner":"ada","id":"x","expected_version":"1"}"#, #"{"ok":false,"error":{"code":"bad_request","message":"$.expected_version expected an integer, found string","field":"$.expected_version"}}"#),
        (#"{"op":"update","learner":"ada","id":"x","expected_version":0}"#, #"{"ok":false,"error":{"code":"bad_request","message":"$.expected_version must be between 1 and 9223372036854775807","field":"$.expected_version"}}"#),
        (#"{"op":"get","v":"2","learner":"ada","id":"x"}"#, #"{"ok":false,"error":{"code":"bad_request","message":"$.v expected an integer, found string","field":"$.v"}}"#),
        (#"{"op":"get","v":99,"learner":"ada","id":"x"}"#, #"{"ok":false,"error":{"code":"bad_request","message":"$.v names contract version 99; this server speaks versions 1 to 4","field":"$.v"}}"#),
        (#"{"op":"create","request_id":"a b","learner":"ada"}"#, #"{"ok":false,"error":{"code":"bad_request","message":"$.request_id may contain only letters, digits and . _ - : @ +","field":"$.request_id"}}"#),
        (#"{"op":"list","learner":"ada","limit":2.0,"order":"up"}"#, #"{"ok":false,"error":{"code":"bad_request","message":"$.order must be asc or desc","field":"$.order"}}"#),
        (#"{"op":"get","learner":"ada","id":"x"} []"#, #"{"ok":false,"error":{"code":"bad_request","message":"the request is not valid JSON: content after the JSON value at byte 38"}}"#),
        (#"{"op":"get","learner":"ada","id":"x",}"#, #"{"ok":false,"error":{"code":"bad_request","message":"the request is not valid JSON: unexpected byte at byte 37"}}"#),
        ("[1]", #"{"ok":false,"error":{"code":"bad_request","message":"$ expected an object, found array","field":"$"}}"#),
        ("null", #"{"ok":false,"error":{"code":"bad_request","message":"$ expected an object, found null","field":"$"}}"#),
        ("", #"{"ok":false,"error":{"code":"bad_request","message":"the request is not valid JSON: unexpected end of input at byte 0"}}"#),
        (#"{"op":"get","learner":"ada","id":"\x"}"#, #"{"ok":false,"error":{"code":"bad_request","message":"the request is not valid JSON: invalid escape sequence at byte 34"}}"#),
    ]

    @Test func errorRepliesAreTheRecordedOnes() {
        let log = InMemoryChangeLog()
        let service = BooksService(log: log, environment: deterministicEnvironment())
        for (request, expected) in Self.cases {
            let reply = String(decoding: service.handle(Array(request.utf8)), as: UTF8.self)
            #expect(reply == expected, "\(request)")
        }
        #expect(log.records.isEmpty)
    }
}
