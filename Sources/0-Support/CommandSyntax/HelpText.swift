extension Command {
    /// The `--help` text of the command that `path` (its words, the program's first) names:
    /// usage lines, summary, options with their value, default and exclusions, positional
    /// arguments, subcommands and the discussion, all from the declarations.
    public func help(path: [String]) -> String {
        let invocation = path.joined(separator: " ")
        var usages: [String] = []
        if run != nil {
            usages.append(([invocation] + (options.isEmpty ? [] : ["[options]"]) + positionals.map(\.usageName)).joined(separator: " "))
        }
        if !subcommands.isEmpty { usages.append("\(invocation) <command> [options]") }
        var sections = [
            "usage: " + usages.joined(separator: "\n       "),
            summary,
        ]
        if !subcommands.isEmpty {
            sections.append("commands:\n" + Self.table(subcommands.map { ($0.name, $0.summary) }))
        }
        if run != nil {
            let rows = options.map { option in
                (([option.flag] + (option.value.placeholder.map { [$0] } ?? [])).joined(separator: " "), describe(option))
            }
            sections.append("options:\n" + Self.table(rows + [("--help", "show this help")]))
        }
        if !positionals.isEmpty {
            sections.append("arguments:\n" + Self.table(positionals.map { ($0.usageName, $0.help) }))
        }
        if let discussion { sections.append(discussion) }
        return sections.joined(separator: "\n\n")
    }

    /// The option's help line with what the declaration adds: default, repetition, exclusions.
    private func describe(_ option: Option) -> String {
        var notes: [String] = []
        if option.isRequired { notes.append("required") }
        if let defaultText = option.defaultText { notes.append("default \(defaultText.isEmpty ? "none" : defaultText)") }
        if option.isRepeatable { notes.append("repeatable") }
        if let group = option.exclusiveGroup {
            let others = options.filter { $0.exclusiveGroup == group && $0.name != option.name }.map(\.flag)
            notes.append("excludes " + others.joined(separator: ", "))
        }
        return option.help + (notes.isEmpty ? "" : " (" + notes.joined(separator: "; ") + ")")
    }

    /// Two aligned columns, indented; a `\n` in the right column continues under it.
    private static func table(_ rows: [(String, String)]) -> String {
        let width = min(24, rows.map(\.0.count).max() ?? 0) + 2
        return rows.map { left, right in
            let lines = right.split(separator: "\n", omittingEmptySubsequences: false)
            let first = "  " + left + (left.count < width ? String(repeating: " ", count: width - left.count) : "\n" + String(repeating: " ", count: width + 2))
            return first + lines.joined(separator: "\n" + String(repeating: " ", count: width + 2))
        }.joined(separator: "\n")
    }
}
