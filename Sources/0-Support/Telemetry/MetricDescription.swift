/// What the exposition says about one metric family: its type and its `# HELP` sentence.
public struct MetricDescription: Sendable {
    /// The Prometheus types the backend renders.
    public enum Kind: String, Sendable {
        case counter, gauge, histogram
    }

    /// The family's name, e.g. `lyceum_requests_total`.
    public let name: String
    /// Its type.
    public let kind: Kind
    /// One sentence for `# HELP`.
    public let help: String

    /// A description of the family `name`.
    public init(_ name: String, _ kind: Kind, _ help: String) {
        self.name = name
        self.kind = kind
        self.help = help
    }
}
