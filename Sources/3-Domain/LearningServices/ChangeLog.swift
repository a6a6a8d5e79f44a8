import Journal

/// The persistence boundary of the write path. A service calls `append` while it holds its
/// state lock (so the log's order is the order changes were applied in), then releases the
/// lock and replies only from the `whenDurable` callback.
public protocol ChangeLog: Sendable {
    /// Appends `changes` as one atomic record, in call order, or throws and appends nothing
    /// (e.g. disk full). Must not wait for durability. Every value is one the service serialized
    /// from typed fields with the JSON module's writers, so a log may trust it to be well-formed.
    func append(_ changes: [JournalChange]) throws -> CommitTicket

    /// Calls `body` exactly once: with success once the record behind `ticket` is as durable as
    /// the configured policy promises, or with the error that keeps it from becoming so. It may
    /// run on the caller's thread before this returns (a log that is durable at once) or later on
    /// a thread the log owns; it must not wait for another `whenDurable` callback of the same log.
    func whenDurable(_ ticket: CommitTicket, _ body: @escaping @Sendable (Result<Void, any Error>) -> Void)
}

/// Names one appended record, to learn when it is durable.
public struct CommitTicket: Sendable, Hashable {
    /// Position of the record in its log.
    public let sequence: UInt64

    /// The ticket of record number `sequence`.
    public init(sequence: UInt64) { self.sequence = sequence }
}
