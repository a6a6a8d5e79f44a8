import JSON
import LearningServices
import Logging
import LyceumSupport

/// Wraps a service's answer so that every request is counted in `RequestMetrics` and, when
/// debug logging is on, logged with its operation, request id, latency and error code. The
/// request line costs nothing when debug is off; the metrics cost a look at the request's first
/// bytes (a parse only for a request not written `{"op":"…`) and a lock.
public enum InstrumentedHandler {
    /// Error codes for which the request's `op` is not trusted as a label: a client could
    /// otherwise make up any number of label values.
    static let untrustedOpCodes: Set<String> = ["bad_request", "unknown_op", "too_large"]

    /// `answer` for `service`, recording into `metrics` when the reply is given.
    public static func wrap(_ answer: @escaping FrameHandler.Answer, service: String, metrics: RequestMetrics) -> FrameHandler.Answer {
        let logger = Logger(component: "request")
        return { request, reply in
            let started = ContinuousClock.now
            answer(request) { answered in
                let elapsed = ContinuousClock.now - started
                let seconds = elapsed.seconds
                let code = errorCode(of: answered)
                let op = code.map(untrustedOpCodes.contains) == true ? "invalid" : operation(of: request) ?? "invalid"
                metrics.record(service: service, op: op, seconds: seconds, errorCode: code)
                if logger.isEnabled(.debug) {
                    let envelope = Envelope(request: request)
                    logger.debug("request", [
                        "service": service, "op": PeerText.excerpt(envelope.op ?? ""), "request_id": PeerText.excerpt(envelope.requestID ?? ""),
                        "latency_us": String(Int(seconds * 1e6)), "code": code ?? "ok",
                    ])
                }
                reply(answered)
            }
        }
    }

    /// The error code of an error reply `{"ok":false,"error":{"code":…}}`; `nil` for a success.
    static func errorCode(of reply: [UInt8]) -> String? {
        if reply.starts(with: successPrefix) { return nil }
        do {
            guard case .string(let code)? = try JSONParser().parse(reply)["error"]?["code"] else { return "unreadable_reply" }
            return code
        } catch {
            return "unreadable_reply"
        }
    }

    private static let successPrefix = Array(#"{"ok":true"#.utf8)

    /// The request's `op`: read straight from the bytes when the request starts `{"op":"` with no
    /// escape in the name, as Lyceum's clients and examples write it, so that counting a request
    /// does not parse it a second time; otherwise from the parsed envelope.
    static func operation(of request: [UInt8]) -> String? {
        guard request.starts(with: leadingOp) else { return Envelope(request: request).op }
        var end = leadingOp.count
        while end < request.count, request[end] != UInt8(ascii: "\""), request[end] != UInt8(ascii: "\\") { end += 1 }
        guard end < request.count, request[end] == UInt8(ascii: "\"") else { return Envelope(request: request).op }
        return String(decoding: request[leadingOp.count..<end], as: UTF8.self)
    }

    private static let leadingOp = Array(#"{"op":""#.utf8)

    /// The request's `op` and `request_id`, when it is a JSON object carrying them as strings.
    struct Envelope {
        var op: String?
        var requestID: String?

        init(request: [UInt8]) {
            do {
                let value = try JSONParser(maxBytes: 1 << 20, maxDepth: 64).parse(request)
                if case .string(let op)? = value["op"] { self.op = op }
                if case .string(let id)? = value["request_id"] { requestID = id }
            } catch {
                // Not JSON: the service has answered bad_request, and the labels say "invalid".
            }
        }
    }
}
