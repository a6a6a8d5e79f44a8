/// A command (or a group of subcommands) declared once: its options, positional arguments,
/// subcommands and what runs it. ``parse(_:)``, the errors and ``help`` are generated from it.
public struct Command: Sendable {
    /// What runs a command once its arguments parsed; the status it returns is the process's.
    /// - Throws: `UsageError` when the arguments are well formed but cannot be used together
    ///   (the runner prints it and exits with status 2).
    public typealias Run = @Sendable (ParsedArguments) throws(UsageError) -> Int32

    /// The word that selects it, e.g. `serve`.
    public let name: String
    /// Other words that select it, e.g. `--version` for `version`.
    public let aliases: [String]
    /// One line for the list of commands and the top of `--help`.
    public let summary: String
    /// Paragraphs `--help` shows after the options: exit statuses, how settings combine.
    public let discussion: String?
    /// Its options, in the order `--help` lists them.
    public let options: [Option]
    /// Its positional arguments, in order.
    public let positionals: [Positional]
    /// Commands selected by the next word, e.g. `plot` of `bench`.
    public let subcommands: [Command]
    /// What runs it; `nil` for a group that only holds subcommands.
    public let run: Run?

    /// Declares a command.
    public init(
        _ name: String, aliases: [String] = [], summary: String, discussion: String? = nil, options: [Option] = [],
        positionals: [Positional] = [], subcommands: [Command] = [], run: Run? = nil
    ) {
        self.name = name
        self.aliases = aliases
        self.summary = summary
        self.discussion = discussion
        self.options = options
        self.positionals = positionals
        self.subcommands = subcommands
        self.run = run
    }

    /// The subcommand that `word` selects.
    func subcommand(_ word: String) -> Command? {
        subcommands.first { $0.name == word || $0.aliases.contains(word) }
    }
}

/// A command line refused: the option involved, if any, and what was wrong.
public struct UsageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The option's name (without `--`), or `nil` when the problem is not one option's.
    public let option: String?
    /// What was wrong, e.g. `needs a value`.
    public let message: String

    /// A refusal of `option` (or of the command line as a whole).
    public init(option: String? = nil, _ message: String) {
        self.option = option
        self.message = message
    }

    /// `--timeout: expected …, got 'x'`, or the message alone.
    public var description: String { option.map { "--\($0): \(message)" } ?? message }
}
