import EventSubscription
/// One snapshot request as the ROUTER reads it (protocol/events.md, "Snapshots"): the topic
/// prefix asked for and, for a page after the first, the cursor the previous page returned.
struct SnapshotRequest: Equatable {
    /// Entries whose topic starts with this, which starts with `progress/`.
    let prefix: String
    /// The last topic already served: the page starts after it; `nil` for the first page.
    let cursor: String?

    /// Parses the frames after the routing id: `SNAPSHOT`, a prefix and an optional cursor.
    /// - Throws: ``EventsError/Code/malformed`` naming what is wrong.
    init(frames: ArraySlice<[UInt8]>) throws(EventsError) {
        guard (2...3).contains(frames.count), frames.first == Array(SnapshotProtocol.snapshotCommand.utf8) else {
            throw EventsError(.malformed, "a snapshot request is SNAPSHOT, a topic prefix and an optional cursor")
        }
        let rest = frames.dropFirst()
        guard let prefix = String(validating: rest.first!, as: UTF8.self), prefix.utf8.starts(with: EventTopic.progress.utf8) else {
            throw EventsError(.malformed, "the topic prefix must be UTF-8 and start with \(EventTopic.progress)")
        }
        self.prefix = prefix
        guard let cursorFrame = rest.dropFirst().first else {
            cursor = nil
            return
        }
        guard let cursor = String(validating: cursorFrame, as: UTF8.self), cursor.utf8.starts(with: prefix.utf8) else {
            throw EventsError(.malformed, "the cursor must be UTF-8 and start with the topic prefix: the next_cursor of the previous page")
        }
        self.cursor = cursor
    }
}
