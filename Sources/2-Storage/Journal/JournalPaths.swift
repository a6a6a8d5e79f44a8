/// The files a journal keeps in its data directory.
struct JournalPaths: Sendable {
    let directory: String

    /// The journal itself.
    var journal: String { directory + "/journal.jsonl" }
    /// The single-writer lock file; never renamed, so the lock always guards the same inode.
    var lock: String { directory + "/journal.lock" }
    /// Where a new journal is built (on creation and compaction) before it is renamed into place.
    var temporary: String { directory + "/journal.jsonl.tmp" }

    /// A new file name for bytes cut off at `offset`, not yet used in the directory.
    func tornTail(at offset: UInt64) -> String { unused(journal + ".torn-\(offset)") }

    /// A new file name for a backup of the journal, not yet used in the directory.
    func backup() -> String { unused(journal + ".backup") }

    private func unused(_ base: String) -> String {
        var candidate = base
        var counter = 1
        while SystemCall.exists(candidate) {
            candidate = base + ".\(counter)"
            counter += 1
        }
        return candidate
    }
}
