/// A secret an endpoint requires of its requests, as `Authorization: Bearer <token>` (the way
/// Prometheus's `authorization` scrape option and browsers' `fetch` send it). Compared in time
/// that does not depend on where the first difference is, so that the answer's timing tells a
/// guesser nothing about how much of a guess was right.
public struct BearerToken: Sendable {
    private let bytes: [UInt8]

    /// The token `text`.
    public init(_ text: String) { bytes = Array(text.utf8) }

    /// The token that `request`'s `Authorization: Bearer` header carries, if it has one.
    public static func presented(in request: HTTPRequest) -> String? {
        request.headers["authorization"].flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }
    }

    /// Whether `given` is this token; every byte of the token is compared whatever `given` is.
    public func matches(_ given: String?) -> Bool {
        let given = Array((given ?? "").utf8)
        var difference = UInt8(given.count == bytes.count ? 0 : 1)
        for index in bytes.indices { difference |= bytes[index] ^ (index < given.count ? given[index] : 0) }
        return difference == 0
    }
}
