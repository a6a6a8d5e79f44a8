import JSON

/// Reads the contract's reply envelope (protocol/README.md, "Envelope"): `{"ok": true, "result"}`
/// or `{"ok": false, "error": {"code", "message", "field"?}}`, with the project's JSON parser.
enum ReplyEnvelope {
    /// The default limits (16 MiB, 64 levels) are far above any reply the contract allows; a
    /// frame beyond them is an invalid reply.
    private static let parser = JSONParser()

    /// The result of a reply, or the typed error it carries.
    /// - Throws: ``LyceumError`` with the server's code, or ``LyceumError/Code/invalidReply``
    ///   when the frame is not the envelope or the result lacks what `Result` needs.
    static func decode<Result: ReplyResult>(_ frame: [UInt8], as: Result.Type, service: String, op: String) throws(LyceumError) -> Result {
        let serverError: (code: String, message: String, field: String?)
        do {
            var envelope = try JSONObjectReader(try parser.parse(frame))
            if try envelope.bool("ok") { return try envelope.result("result") }
            var error = try envelope.object("error")
            serverError = (try error.string("code"), try error.string("message"), try error.optionalString("field"))
        } catch {
            throw LyceumError(code: .invalidReply, message: "\(error)", service: service, op: op)
        }
        throw LyceumError(
            code: LyceumError.Code(wireName: serverError.code), message: serverError.message, field: serverError.field, service: service, op: op)
    }
}
