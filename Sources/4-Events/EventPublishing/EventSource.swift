#if canImport(Glibc)
import EventSubscription
import Glibc
#endif

/// Who published an event: one publisher in one process run. Sequence numbers count per source,
/// so a subscriber keeps one expected sequence per source and starts over when it meets a new one.
///
/// Written `<host>:<pid>:<16 hex digits>`: the host and process say where events come from, the
/// random part makes a restarted process (same host, maybe the same pid) a different source.
public struct EventSource: Sendable, Hashable, CustomStringConvertible {
    /// The textual identity carried in every event's `source` member.
    public let description: String

    /// An identity chosen at random for this process run.
    public static func random() -> EventSource {
        var name = [CChar](repeating: 0, count: 256)
        let host = gethostname(&name, name.count) == 0
            ? String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "unknown-host"
        var generator = SystemRandomNumberGenerator()
        let random = String(generator.next() as UInt64, radix: 16)
        return EventSource(description: "\(host):\(getpid()):\(String(repeating: "0", count: 16 - random.count))\(random)")
    }

    /// The source named `description`, as read from an event.
    public init(description: String) { self.description = description }
}
