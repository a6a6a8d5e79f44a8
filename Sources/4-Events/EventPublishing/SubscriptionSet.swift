import EventSubscription
/// The topic prefixes some subscriber of an XPUB socket has subscribed to, kept from the
/// subscription messages the socket passes up, so that the publisher encodes only events that
/// will reach somebody.
///
/// An XPUB socket (without `ZMQ_XPUB_VERBOSE`) passes up `0x01 prefix` when the first
/// subscriber takes a prefix and `0x00 prefix` when the last one drops it, or disconnects; so
/// a set of prefixes, not counts, mirrors the socket's own filter.
struct SubscriptionSet {
    private var prefixes: Set<[UInt8]> = []

    /// Applies one message from the XPUB socket; messages that are not subscriptions (an XSUB
    /// may forward anything) change nothing.
    mutating func apply(_ message: [UInt8]) {
        guard let command = message.first else { return }
        switch command {
        case 1: prefixes.insert(Array(message.dropFirst()))
        case 0: prefixes.remove(Array(message.dropFirst()))
        default: return
        }
    }

    /// Whether some subscriber takes messages on `topic`.
    func wants(_ topic: some Collection<UInt8>) -> Bool {
        prefixes.contains { topic.starts(with: $0) }
    }

    /// Whether some subscriber takes messages on the topic `head` followed by `tail`, without
    /// building that topic.
    func wants(_ head: some Collection<UInt8>, followedBy tail: some Collection<UInt8>) -> Bool {
        prefixes.contains { prefix in
            guard prefix.count > head.count else { return head.starts(with: prefix) }
            return prefix.starts(with: head) && tail.starts(with: prefix.dropFirst(head.count))
        }
    }
}
