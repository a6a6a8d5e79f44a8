/// One `--name` option of a command, declared once: parsing, errors and `--help` all read it.
public struct Option: Sendable {
    /// The name after `--`, e.g. `log-level`.
    public let name: String
    /// What the option takes: nothing (a switch) or a value of some kind.
    public let value: OptionValue
    /// One sentence for `--help`; a `\n` starts a continuation line.
    public let help: String
    /// The default shown in `--help`, taken from the type that applies it; `nil` shows none.
    /// The parser never applies it: an option not given is simply absent.
    public let defaultText: String?
    /// Whether the option may be given more than once, each value kept in order.
    public let isRepeatable: Bool
    /// Options sharing a group exclude each other; `nil` excludes nothing.
    public let exclusiveGroup: String?
    /// Whether the command refuses to run without it.
    public let isRequired: Bool

    /// Declares an option.
    public init(
        _ name: String, _ value: OptionValue, help: String, default defaultText: String? = nil, repeatable: Bool = false,
        exclusiveGroup: String? = nil, required: Bool = false
    ) {
        self.name = name
        self.value = value
        self.help = help
        self.defaultText = defaultText
        self.isRepeatable = repeatable
        self.exclusiveGroup = exclusiveGroup
        self.isRequired = required
    }

    /// The flag as typed, e.g. `--log-level`.
    public var flag: String { "--" + name }
}

/// What an option takes after its flag, and how the parser checks it before the command runs.
public enum OptionValue: Sendable {
    /// Nothing: the option is a switch.
    case none
    /// Any text, empty included; the command checks it (settings are checked by `Settings`,
    /// as from every other source).
    case text(placeholder: String)
    /// A whole number within `range`.
    case integer(placeholder: String, range: ClosedRange<Int>)
    /// A whole number ≥ 0 that fits 64 bits (seeds).
    case unsignedInteger(placeholder: String)
    /// A finite decimal number.
    case number(placeholder: String)
    /// A duration: `500ms`, `10s`, `2m`, `12h`, `7d`, or a bare number of seconds.
    case duration(placeholder: String)
    /// One of `choices`.
    case choice([String])

    /// The word `--help` shows after the flag; `nil` for a switch.
    var placeholder: String? {
        switch self {
        case .none: nil
        case .text(let placeholder), .integer(let placeholder, _), .unsignedInteger(let placeholder),
             .number(let placeholder), .duration(let placeholder):
            placeholder
        case .choice(let choices): choices.joined(separator: "|")
        }
    }

    /// What a valid value looks like, for the error that refuses `text`; `nil` when `text` is valid.
    func refusal(of text: String) -> String? {
        switch self {
        case .none, .text: return nil
        case .integer(_, let range):
            guard let number = Int(text), range.contains(number) else {
                return "expected an integer from \(range.lowerBound) to \(range.upperBound), got '\(text)'"
            }
            return nil
        case .unsignedInteger:
            return UInt64(text) == nil ? "expected a whole number ≥ 0, got '\(text)'" : nil
        case .number:
            return Double(text).map(\.isFinite) == true ? nil : "expected a number, got '\(text)'"
        case .duration:
            return Self.duration(text) == nil ? "expected a duration such as 500ms, 10s or 2m, got '\(text)'" : nil
        case .choice(let choices):
            return choices.contains(text) ? nil : "expected one of \(choices.joined(separator: ", ")), got '\(text)'"
        }
    }

    /// `duration` as a `.duration` option reads it back: `10s`, or `250ms` below whole seconds.
    public static func text(of duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        return attoseconds == 0 ? "\(seconds)s" : "\(seconds * 1000 + attoseconds / 1_000_000_000_000_000)ms"
    }

    /// `500ms`, `10s`, `2m`, `12h`, `7d`, or a bare number of seconds; under 10⁷ of the unit
    /// and under a century (what 64 bits of nanoseconds hold, with room).
    static func duration(_ text: String) -> Duration? {
        let units: [(suffix: String, nanoseconds: Double)] = [("ms", 1e6), ("s", 1e9), ("m", 60e9), ("h", 3600e9), ("d", 86_400e9)]
        let unit = units.first { text.hasSuffix($0.suffix) } ?? ("", 1e9)
        guard let number = Double(text.dropLast(unit.suffix.count)), number.isFinite, number >= 0, number < 1e7,
              number * unit.nanoseconds < 36_525 * 86_400e9 else { return nil }
        return .nanoseconds(Int64(number * unit.nanoseconds))
    }
}

/// One positional argument of a command, e.g. `SERVICE`.
public struct Positional: Sendable {
    /// How many values it takes.
    public enum Count: Sendable {
        /// Exactly one.
        case one
        /// One or more; only the last positional may be so.
        case oneOrMore
        /// Any number, none included; only the last positional may be so.
        case any
    }

    /// The name `--help` shows, e.g. `SERVICE`.
    public let name: String
    /// One sentence for `--help`.
    public let help: String
    /// How many values it takes.
    public let count: Count

    /// Declares a positional argument.
    public init(_ name: String, help: String, count: Count = .one) {
        self.name = name
        self.help = help
        self.count = count
    }

    /// The name as the usage line shows it: `RESULTS...` for several.
    var usageName: String { count == .one ? name : name + "..." }
}
