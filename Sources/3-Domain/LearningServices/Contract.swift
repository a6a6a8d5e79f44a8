/// Fixed facts of the wire contract that `protocol/README.md` documents.
public enum Contract {
    /// The newest contract version this server speaks; a request may state it as `"v"`.
    public static let version = 4
    /// The contract versions a request may state; error codes newer than the one stated are
    /// sent as `bad_request`.
    public static let versions = 1...version
    /// The largest request frame accepted, in bytes; larger ones get `too_large`.
    public static let maxRequestBytes = 64 * 1024
    /// The deepest JSON nesting accepted in a request.
    public static let maxRequestDepth = 16
    /// The longest book, course or lesson id a request may name, in characters: book ids are
    /// UUIDs and catalog ids are at most 64 characters, so a longer one cannot exist.
    public static let maxIDLength = 64
}
