import CommandSyntax
import Testing

/// The one parser: every behaviour a subcommand relies on, from a small declaration.
struct CommandParsingTests {
    static let command = Command(
        "demo", summary: "a command to parse",
        options: [
            Option("endpoint", .text(placeholder: "EP"), help: "where to connect", default: "tcp://127.0.0.1:5555", repeatable: true),
            Option("count", .integer(placeholder: "N", range: 1...10), help: "how many", default: "3"),
            Option("wait", .duration(placeholder: "T"), help: "how long"),
            Option("json", .none, help: "print JSON", exclusiveGroup: "output"),
            Option("plain", .none, help: "print lines", exclusiveGroup: "output"),
            Option("data", .text(placeholder: "DIR"), help: "the data", required: true),
        ],
        positionals: [Positional("SERVICE", help: "a service"), Positional("BODY", help: "bodies", count: .any)],
        subcommands: [Command("inner", summary: "a subcommand") { _ in 7 }]
    ) { _ in 0 }

    static func parse(_ arguments: [String]) throws(UsageError) -> ParsedArguments {
        try command.parse(arguments)
    }

    @Test func bothValueSpellingsParseAndRepeatableOptionsKeepEveryValueInOrder() throws {
        let parsed = try Self.parse(["--endpoint", "tcp://a:1", "--endpoint=tcp://b:2", "--count=4", "--data", "d", "books", "{}"])
        #expect(parsed.values("endpoint") == ["tcp://a:1", "tcp://b:2"])
        #expect(parsed.integer("count") == 4)
        #expect(parsed.text("data") == "d")
        #expect(parsed.positionals == ["books", "{}"])
        #expect(parsed.occurrences.map(\.name) == ["endpoint", "endpoint", "count", "data"])
    }

    @Test func theLastValueOfAnOptionGivenTwiceWins() throws {
        #expect(try Self.parse(["--count", "1", "--data", "d", "--count", "2", "x"]).integer("count") == 2)
    }

    @Test func anOptionNotGivenIsAbsentNotDefaulted() throws {
        let parsed = try Self.parse(["--data", "d", "books"])
        #expect(parsed.integer("count") == nil)
        #expect(!parsed.contains("json"))
    }

    @Test func aValueMayStartWithOneDashOrFollowAnEqualsSign() throws {
        let parsed = try Self.parse(["--data", "-x", "--endpoint=--odd", "books"])
        #expect(parsed.text("data") == "-x")
        #expect(parsed.text("endpoint") == "--odd")
    }

    @Test func argumentsAfterADoubleDashArePositional() throws {
        let parsed = try Self.parse(["--data", "d", "--", "books", "--count", "-h"])
        #expect(parsed.positionals == ["books", "--count", "-h"])
        #expect(parsed.integer("count") == nil)
    }

    @Test(arguments: [
        (["--colour", "red", "--data", "d", "x"], "unknown flag --colour; this command takes --count, --data, --endpoint, --json, --plain, --wait"),
        (["-c", "--data", "d", "x"], "unknown flag -c;"),
        (["--count=5=6", "--data", "d", "x"], "--count: expected an integer from 1 to 10, got '5=6'"),
        (["--data", "d", "x", "--count"], "--count: needs a value"),
        (["--count", "--data", "d", "x"], "--count: needs a value"),
        (["--count", "11", "--data", "d", "x"], "--count: expected an integer from 1 to 10, got '11'"),
        (["--wait", "soon", "--data", "d", "x"], "--wait: expected a duration such as 500ms, 10s or 2m, got 'soon'"),
        (["--json=yes", "--data", "d", "x"], "--json: takes no value"),
        (["--json", "--plain", "--data", "d", "x"], "--plain: excludes --json"),
        (["x"], "--data is required"),
        (["--data", "d"], "expected at least 1 argument (SERVICE BODY...), got 0"),
    ])
    func badCommandLinesAreRefusedNamingTheProblem(arguments: [String], message: String) {
        #expect {
            try Self.parse(arguments)
        } throws: { error in
            "\(error)".hasPrefix(message) || { print("got: \(error)\nexpected: \(message)"); return false }()
        }
    }

    @Test func aCommandWithoutPositionalsRefusesOneAndCountsFixedOnes() throws {
        let none = Command("none", summary: "", options: [])
        #expect(throws: UsageError("expected no arguments, got 1")) { try none.parse(["x"]) }
        let two = Command("two", summary: "", positionals: [Positional("A", help: ""), Positional("B", help: "")])
        #expect(throws: UsageError("expected 2 arguments (A B), got 3")) { try two.parse(["a", "b", "c"]) }
        #expect(try two.parse(["a", "b"]).positionals == ["a", "b"])
    }

    @Test func helpListsEveryOptionWithItsValueDefaultAndExclusions() {
        let help = Self.command.help(path: ["lyceum", "demo"])
        #expect(help.hasPrefix("usage: lyceum demo [options] SERVICE BODY...\n       lyceum demo <command> [options]"))
        for option in Self.command.options { #expect(help.contains(option.flag), "\(option.flag) missing from\n\(help)") }
        #expect(help.contains("--endpoint EP"))
        #expect(help.contains("where to connect (default tcp://127.0.0.1:5555; repeatable)"))
        #expect(help.contains("print JSON (excludes --plain)"))
        #expect(help.contains("the data (required)"))
        #expect(help.contains("inner"))
        #expect(help.contains("--help"))
    }

    @Test func helpAsksAreSeenBeforeADoubleDashOnly() {
        #expect(Command.asksForHelp(["--count", "1", "-h"]))
        #expect(Command.asksForHelp(["--help"]))
        #expect(!Command.asksForHelp(["--", "--help"]))
    }

    @Test func mainDispatchesToSubcommandsAndExitsTwoOnAUsageError() {
        let program = Command("prog", summary: "", subcommands: [Self.command])
        #expect(program.main(["demo", "inner"]) == 7)
        #expect(program.main(["demo", "--data", "d", "books"]) == 0)
        #expect(program.main(["demo", "--bogus"]) == Command.usageStatus)
        #expect(program.main(["nonesuch"]) == Command.usageStatus)
        #expect(program.main(["demo", "--help"]) == 0)
        #expect(program.main([]) == 0)
    }

    @Test func aUsageErrorThrownByTheCommandExitsTwo() {
        let refusing = Command("refusing", summary: "") { _ throws(UsageError) in throw UsageError(option: "x", "no") }
        #expect(Command("prog", summary: "", subcommands: [refusing]).main(["refusing"]) == Command.usageStatus)
    }

    @Test func durationsTakeHoursAndDaysUpToACentury() throws {
        #expect(try Self.parse(["--wait", "12h", "--data", "d", "x"]).duration("wait") == .seconds(12 * 3600))
        #expect(try Self.parse(["--wait", "7d", "--data", "d", "x"]).duration("wait") == .seconds(7 * 86_400))
        #expect(try Self.parse(["--wait", "2m", "--data", "d", "x"]).duration("wait") == .seconds(120))
        // Past 64 bits of nanoseconds would trap; it is refused instead.
        #expect(throws: UsageError.self) { try Self.parse(["--wait", "9999999d", "--data", "d", "x"]) }
    }

    @Test func durationsReadBackAsTheyAreShown() {
        #expect(OptionValue.text(of: .seconds(10)) == "10s")
        #expect(OptionValue.text(of: .milliseconds(2500)) == "2500ms")
    }
}
