extension Command {
    /// Whether `arguments` ask for help: `--help` or `-h` before any `--`.
    public static func asksForHelp(_ arguments: some Collection<String>) -> Bool {
        for argument in arguments {
            if argument == "--" { return false }
            if argument == "--help" || argument == "-h" { return true }
        }
        return false
    }

    /// Matches `arguments` (those after the command's words in `path`) to the declaration:
    /// `--name value` and `--name=value`, switches, positionals, and `--` before arguments that
    /// are positional even if they start with `-`. `--help` and `-h` are left to the caller.
    /// An option that is not repeatable may still be given again: the last value wins, so a
    /// wrapper script can append an override.
    /// - Throws: `UsageError` for an unknown flag (naming it and listing the known ones), a
    ///   missing or bad value, a value given to a switch, two options of one exclusive group, a missing required option, or the
    ///   wrong number of positional arguments.
    public func parse(_ arguments: [String], path: [String] = []) throws(UsageError) -> ParsedArguments {
        var occurrences: [(name: String, value: String?)] = []
        var positionals: [String] = []
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            if argument == "--" {
                positionals += remaining
                break
            }
            if argument == "--help" || argument == "-h" { continue }
            guard argument.hasPrefix("-"), argument.count > 1 else {
                positionals.append(argument)
                continue
            }
            let (option, inlineValue) = try self.option(in: argument)
            var value: String?
            if case .none = option.value {
                guard inlineValue == nil else { throw UsageError(option: option.name, "takes no value") }
            } else {
                // A flag where the value should be means the value was forgotten; `=` still
                // passes a value that starts with `--`.
                guard let given = inlineValue ?? remaining.first.flatMap({ $0.hasPrefix("--") ? nil : $0 }) else {
                    throw UsageError(option: option.name, "needs a value")
                }
                if inlineValue == nil { remaining.removeFirst() }
                if let refusal = option.value.refusal(of: given) { throw UsageError(option: option.name, refusal) }
                value = given
            }
            if let group = option.exclusiveGroup,
               let other = occurrences.first(where: { $0.name != option.name && self.option(named: $0.name)?.exclusiveGroup == group }) {
                throw UsageError(option: option.name, "excludes --\(other.name)")
            }
            occurrences.append((option.name, value))
        }
        for option in options where option.isRequired && !occurrences.contains(where: { $0.name == option.name }) {
            throw UsageError("\(option.flag) is required")
        }
        try checkCount(of: positionals)
        return ParsedArguments(commandPath: path, arguments: arguments, occurrences: occurrences, positionals: positionals)
    }

    /// The declared option `name`.
    func option(named name: String) -> Option? { options.first { $0.name == name } }

    private func option(in argument: String) throws(UsageError) -> (Option, String?) {
        let body = argument.drop { $0 == "-" }
        let equals = body.firstIndex(of: "=")
        let name = String(body[..<(equals ?? body.endIndex)])
        guard argument.hasPrefix("--"), let option = option(named: name) else {
            let known = options.map(\.flag).sorted().joined(separator: ", ")
            let flag = argument.split(separator: "=", maxSplits: 1).first.map(String.init) ?? argument
            throw UsageError("unknown flag \(flag); this command takes \(known.isEmpty ? "no flags" : known)")
        }
        return (option, equals.map { String(body[body.index(after: $0)...]) })
    }

    private func checkCount(of positionals: [String]) throws(UsageError) {
        let fixed = self.positionals.filter { $0.count == .one }.count
        let open = self.positionals.last.map { $0.count != .one } ?? false
        let least = fixed + (self.positionals.last?.count == .oneOrMore ? 1 : 0)
        guard positionals.count < least || (!open && positionals.count > fixed) else { return }
        let names = self.positionals.map(\.usageName).joined(separator: " ")
        let expected = switch (least, open) {
        case (0, false): "no arguments"
        case (_, false): "\(least) argument\(least == 1 ? "" : "s") (\(names))"
        case (_, true): "at least \(least) argument\(least == 1 ? "" : "s") (\(names))"
        }
        throw UsageError("expected \(expected), got \(positionals.count)")
    }
}
