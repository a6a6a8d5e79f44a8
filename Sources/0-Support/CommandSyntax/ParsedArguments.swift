/// A command line that matched its command's declaration: every option given, in order, and
/// the positional arguments. Values were checked against their ``OptionValue`` when parsed, so
/// the typed accessors only convert.
public struct ParsedArguments: Sendable {
    /// The words that selected the command, e.g. `["lyceum", "bench", "plot"]`.
    public let commandPath: [String]
    /// The arguments after those words, as given (read again on SIGHUP by settings).
    public let arguments: [String]
    /// Each option given, in command-line order: its name and value (`nil` for a switch).
    public let occurrences: [(name: String, value: String?)]
    /// The positional arguments, in order.
    public let positionals: [String]

    /// Whether the option `name` was given.
    public func contains(_ name: String) -> Bool { occurrences.contains { $0.name == name } }

    /// Every value given to `name`, in order.
    public func values(_ name: String) -> [String] { occurrences.filter { $0.name == name }.compactMap(\.value) }

    /// The value given to `name`, if it was; the last one when it was given more than once.
    public func text(_ name: String) -> String? { values(name).last }

    /// The whole number given to `name` (declared `.integer`), if it was.
    public func integer(_ name: String) -> Int? { text(name).flatMap { Int($0) } }

    /// The whole number given to `name` (declared `.unsignedInteger`), if it was.
    public func unsignedInteger(_ name: String) -> UInt64? { text(name).flatMap { UInt64($0) } }

    /// The number given to `name` (declared `.number`), if it was.
    public func number(_ name: String) -> Double? { text(name).flatMap { Double($0) } }

    /// The duration given to `name` (declared `.duration`), if it was.
    public func duration(_ name: String) -> Duration? { text(name).flatMap(OptionValue.duration) }
}
