import Access
import LyceumSupport

extension SettingKey {
    /// The learning services' data and limits, in the processes that host them (`serve`, `worker`).
    static let servicesKeys = [data, catalog, durability, maxReplyBytes, maxBooksPerLearner, maxLibraryBytes, backupIdleLimit]

    /// The bytes one page of a list reply may be set to hold: from 4 KiB (one book always fits,
    /// since a single item is never refused) to 16 MiB. The default is `ReplyBudget.standard`'s
    /// (`SettingBoundsTests`).
    static let replyBytesRange = 4 * 1024...16 * 1024 * 1024
    /// The books one learner's library may be set to hold; the default, and that of
    /// `libraryBytesRange`, are `LibraryLimits.standard`'s (`SettingBoundsTests`).
    static let libraryBooksRange = 1...10_000_000
    /// The bytes of one learner's books' texts a library may be set to hold.
    static let libraryBytesRange = 1_024...(1 << 40)

    /// `Settings.dataDirectory`.
    public static let data = one(
        "data", \.dataDirectory, .nonEmpty("a directory"),
        commands: SettingCommand.hosts.union([.restore]), placeholder: "DIR", help: "the data directory; each stateful service journals in DIR/<service>")
    /// `Settings.catalogPaths`.
    public static let catalog = list(
        "catalog", \.catalogPaths, .nonEmpty("a catalog file or directory"), none: "the sample catalog",
        commands: SettingCommand.hosts, placeholder: "PATH", help: "a catalog file or directory (none: the sample catalog)")
    /// `Settings.durability`.
    public static let durability = one(
        "durability", \.durability,
        SettingType(expecting: "always, none, interval or interval:MILLISECONDS", DurabilityPolicy.init, format: \.description),
        commands: SettingCommand.hosts, placeholder: "POLICY", help: "when a write is durable: always, none, interval or interval:MS")
    /// `Settings.maxReplyBytes`.
    public static let maxReplyBytes = one(
        "max-reply-bytes", \.maxReplyBytes, .integer(replyBytesRange, "bytes"),
        commands: SettingCommand.hosts, placeholder: "BYTES", help: "the most bytes of items one list or search page holds")
    /// `Settings.maxBooksPerLearner`.
    public static let maxBooksPerLearner = one(
        "max-books-per-learner", \.maxBooksPerLearner, .integer(libraryBooksRange, "books"),
        commands: SettingCommand.hosts, placeholder: "N", help: "the most books one learner's library holds (limit_exceeded past it)")
    /// `Settings.maxLibraryBytes`.
    public static let maxLibraryBytes = one(
        "max-library-bytes", \.maxLibraryBytes, .integer(libraryBytesRange, "bytes"),
        commands: SettingCommand.hosts, placeholder: "BYTES", help: "the most bytes of titles, authors and reviews one learner's library holds")
    /// `Settings.backupIdleLimit`.
    public static let backupIdleLimit = one(
        "backup-idle-limit", \.backupIdleLimit, .milliseconds(1...3_600_000),
        commands: SettingCommand.hosts, placeholder: "MS", help: "how long a backup goes without a request from its client before its files are removed")
}
