import JSON
@testable import LyceumClient
import Testing

/// The request frames the client writes and how it reads replies, with the project's JSON module.
struct WireTests {
    @Test("a request leaves out nil parameters, escapes strings, and sends a non-finite number as null")
    func requestFrames() {
        let body = RequestBody(op: "save_position", parameters: [
            ("learner", .string("a\"da\n")), ("review", nil), ("position_seconds", .number(.infinity)),
            ("rating", .integer(-3)), ("answers", .integers([0, 2])), ("seconds", .number(12.5)),
        ])
        #expect(String(decoding: body.encoded(), as: UTF8.self)
            == #"{"op":"save_position","learner":"a\"da\n","position_seconds":null,"rating":-3,"answers":[0,2],"seconds":12.5}"#)
    }

    @Test("a reply decodes into the typed result, ignoring members it does not know")
    func replies() throws {
        let reply = #"{"ok":true,"result":{"categories":[{"name":"Swift","course_count":3,"new":true}],"extra":[1]}}"#
        let categories = try ReplyEnvelope.decode(Array(reply.utf8), as: CategoriesResult.self, service: "catalog", op: "list_categories").categories
        #expect(categories == [Category(name: "Swift", courseCount: 3)])
    }

    @Test("a reply that lacks what the result needs is invalid_reply naming the member's path")
    func invalidReplyPaths() {
        func message(_ reply: String) -> String? {
            do {
                _ = try ReplyEnvelope.decode(Array(reply.utf8), as: CategoriesResult.self, service: "catalog", op: "list_categories")
                return nil
            } catch {
                return error.code == .invalidReply ? error.message : "\(error.code)"
            }
        }
        #expect(message(#"{"ok":true,"result":{"categories":[{"name":"A","course_count":1},{"name":2}]}}"#)
            == "$.result.categories[1].name: expected a string, found number")
        #expect(message(#"{"ok":true,"result":{"categories":[{"name":"A"}]}}"#) == "$.result.categories[0].course_count: is required")
        #expect(message(#"{"ok":true,"result":{"categories":[7]}}"#) == "$.result.categories[0]: expected an object, found number")
        #expect(message(#"{"ok":true,"result":{"categories":{}}}"#) == "$.result.categories: expected an array, found object")
        #expect(message(#"{"ok":"yes"}"#) == "$.ok: expected a boolean, found string")
    }
}
