import Foundation

/// Reads the contract's reply envelope (protocol/README.md, "Envelope"): `{"ok": true, "result"}`
/// or `{"ok": false, "error": {"code", "message", "field"?}}`.
enum Reply {
    private struct Envelope<Result: Decodable>: Decodable {
        let ok: Bool
        let result: Result?
        let error: ServerError?
    }

    private struct ServerError: Decodable {
        let code: String
        let message: String
        let field: String?
    }

    private static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return decoder
    }

    /// The result of a reply, or the typed error it carries.
    /// - Throws: ``LyceumError`` with the server's code, or ``LyceumError/Code/invalidReply``
    ///   when the frame is not the envelope or the result lacks what `Result` needs.
    static func decode<Result: Decodable>(_ frame: [UInt8], as: Result.Type, service: String, op: String) throws(LyceumError) -> Result {
        let envelope: Envelope<Result>
        do {
            envelope = try decoder().decode(Envelope<Result>.self, from: Data(frame))
        } catch {
            throw LyceumError(code: .invalidReply, message: "\(error)", service: service, op: op)
        }
        if envelope.ok, let result = envelope.result { return result }
        guard let error = envelope.error else {
            throw LyceumError(code: .invalidReply, message: "a reply with neither a result nor an error", service: service, op: op)
        }
        throw LyceumError(code: LyceumError.Code(wireName: error.code), message: error.message, field: error.field, service: service, op: op)
    }
}
