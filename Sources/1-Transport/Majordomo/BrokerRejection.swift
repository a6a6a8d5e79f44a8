/// The error reply Lyceum's broker sends instead of silence when it cannot serve a request.
///
/// MDP reply bodies are opaque, so the rejection is a reply body of exactly one frame:
/// `0x00 "MDP-ERROR" 0x20 <code> 0x20 <text>`. The leading zero byte keeps it apart from any
/// text or JSON body. Documented in `protocol/majordomo.md`.
public struct BrokerRejection: Equatable, Sendable {
    /// The reason, as a stable snake_case word on the wire.
    public enum Code: String, Sendable, CaseIterable {
        /// The service's queue is full.
        case queueFull = "queue_full"
        /// The broker's queues together are full.
        case overloaded = "overloaded"
        /// No worker registered for the service within the broker's wait.
        case serviceUnknown = "service_unknown"
        /// The caller's key may not do this: a service call without `callServices`, a
        /// management call without `manage`.
        case forbidden
        /// The caller's key is not (or no longer) authorised, or a worker that trusts caller
        /// identities got a request without one.
        case unauthenticated
        /// The request names no 7/MDP service (``MDP/serviceNameProblem(_:)``); the reply's
        /// service frame is an excerpt of the name, not the name.
        case badRequest = "bad_request"

        /// The code a rejection names, in today's spelling or in the kebab-case one that brokers
        /// before the snake_case change sent (`queue-full`), so that a newer client still reads an
        /// older broker; `nil` for a word that is no code.
        init?(wireWord word: String) {
            guard let code = Code(rawValue: word) ?? Code(rawValue: String(word.map { $0 == "-" ? "_" : $0 })) else { return nil }
            self = code
        }

        /// The ``MajordomoError`` code a client surfaces for a rejection with this code.
        var errorCode: MajordomoError.Code {
            switch self {
            case .queueFull: .queueFull
            case .overloaded: .brokerOverloaded
            case .serviceUnknown: .serviceUnknown
            case .forbidden: .forbidden
            case .unauthenticated: .unauthenticated
            case .badRequest: .badRequest
            }
        }
    }

    /// Bytes every rejection frame starts with.
    public static let marker: [UInt8] = [0x00] + Array("MDP-ERROR ".utf8)

    /// The reason.
    public var code: Code
    /// A sentence for a person.
    public var text: String

    /// Creates a rejection.
    public init(code: Code, text: String) {
        self.code = code
        self.text = text
    }

    /// The one frame of the reply body.
    public var frame: [UInt8] {
        Self.marker + Array("\(code.rawValue) \(text)".utf8)
    }

    /// Reads a reply body as a rejection; `nil` when it is an ordinary reply.
    public init?(body: [[UInt8]]) {
        guard body.count == 1, body[0].starts(with: Self.marker) else { return nil }
        let words = body[0].dropFirst(Self.marker.count).split(separator: 0x20, maxSplits: 1, omittingEmptySubsequences: false)
        guard let first = words.first, let code = Code(wireWord: String(decoding: first, as: UTF8.self)) else { return nil }
        self.code = code
        text = words.count > 1 ? String(decoding: words[1], as: UTF8.self) : ""
    }

    /// The typed error a client surfaces for this rejection.
    func error(service: String, endpoint: String) -> MajordomoError {
        MajordomoError(code: code.errorCode, service: service, endpoint: endpoint, detail: text)
    }
}
