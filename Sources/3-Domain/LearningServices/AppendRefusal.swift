import Journal

extension ServiceError {
    /// The error a client gets for a write its change log refused before anything was applied:
    /// `storage_full` when the file system is out of space (`ENOSPC`, `EDQUOT`), else
    /// `unavailable`. The message says what to do and names the journal's error code, never the
    /// server's files: the journal's own log line and metric name those
    /// (protocol/README.md, *Error codes*).
    init(refusedAppend error: any Error) {
        guard let error = error as? JournalError else {
            self.init(.unavailable, "the write could not be journaled (\(error)); nothing was applied: retry later")
            return
        }
        if error.isStorageFull {
            self.init(.storageFull, "the server's storage is full; nothing was applied: retry once space is freed")
        } else {
            self.init(.unavailable, "the write could not be journaled (journal \(error.code)); nothing was applied: retry later")
        }
    }
}
