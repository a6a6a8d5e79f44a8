/// The topic frames Lyceum publishes, built so that a ZeroMQ prefix subscription selects what a
/// dashboard needs (see protocol/events.md):
///
/// - `progress/<course>/<learner>`: one progress event; subscribe to `progress/` for all,
///   `progress/<course>/` for one course, `progress/<course>/<learner>` for one learner there.
/// - `xapi/progress/<course>/<learner>`: the same event as an xAPI statement.
/// - `books/<learner>/<book id>`: one change to a learner's library; subscribe to `books/` for
///   all, `books/<learner>/` for one learner's library.
/// - `hb/`: the heartbeat of each source.
///
/// Ids are escaped so that they never contain `/`: `%` becomes `%25` and `/` becomes `%2F`.
/// Subscribe with a trailing `/` after a course id, since `progress/c1` also matches `progress/c10/…`.
public enum EventTopic {
    /// Prefix of every progress event topic.
    public static let progress = "progress/"
    /// Prefix of every xAPI statement topic.
    public static let xapi = "xapi/"
    /// Prefix of every book event topic.
    public static let books = "books/"
    /// The heartbeat topic.
    public static let heartbeat = "hb/"
    /// Largest frame of an event message accepted from the network (`ZMQ_MAXMSGSIZE` of the
    /// forwarder's input and of subscribers). An event carries what one request (at most
    /// 64 KiB) wrote, which JSON escaping at most sextuples; in practice a few KiB.
    public static let maxFrameBytes: Int64 = 1 << 20

    /// The longest subscription prefix an XPUB of Lyceum's takes, in bytes; a longer one is a
    /// subscription message over the socket's `ZMQ_MAXMSGSIZE` (``maxSubscriptionMessageBytes``), so
    /// libzmq drops the peer's connection before the prefix reaches its subscription trie
    /// (whose recursion a 128 KiB prefix overflows, and where a stored byte costs about 36).
    /// Real prefixes (a topic up to the learner or book id) are far shorter.
    public static let maxSubscriptionBytes = 1024

    /// `ZMQ_MAXMSGSIZE` for a socket that receives subscriptions: ``maxSubscriptionBytes`` and
    /// what precedes the prefix in the frame, 10 bytes for a ZMTP 3.1 `SUBSCRIBE` command (its
    /// length byte and name; libzmq 4.3 peers send these) or 1 for a ZMTP 3.0 subscribe byte.
    public static let maxSubscriptionMessageBytes = Int64(maxSubscriptionBytes + 10)

    /// The topic of a progress event of `learner` in `course`.
    public static func progress(course: String, learner: String) -> String {
        progress + escape(course) + "/" + escape(learner)
    }

    /// The subscription prefix for one course's events, or all progress events when `course` is `nil`.
    public static func progressPrefix(course: String?) -> String {
        course.map { progress + escape($0) + "/" } ?? progress
    }

    /// The topic of a change to book `bookID` in the library of `learner`.
    public static func book(learner: String, bookID: String) -> String {
        books + escape(learner) + "/" + escape(bookID)
    }

    /// The subscription prefix for one learner's library, or all book events when `learner` is `nil`.
    public static func booksPrefix(learner: String?) -> String {
        learner.map { books + escape($0) + "/" } ?? books
    }

    /// `id` with `%` and `/` percent-encoded, so that it is one topic segment.
    public static func escape(_ id: String) -> String {
        guard id.utf8.contains(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "%") }) else { return id }
        var escaped = ""
        for character in id.unicodeScalars {
            switch character {
            case "%": escaped += "%25"
            case "/": escaped += "%2F"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }
}
