import Foundation

extension Command {
    /// Exit status for a command line that does not match its declaration.
    public static let usageStatus: Int32 = 2

    /// Runs the program this command declares with `arguments` (those after the program's
    /// name): follows subcommand words, prints help for `--help`, `-h` or `help`, parses, and
    /// runs the selected command.
    /// - Returns: the process's exit status: the command's own, 0 after help, 2 for a command
    ///   line that does not match (the error on stderr with a pointer to `--help`).
    public func main(_ arguments: [String]) -> Int32 {
        var command = self
        var path = [name]
        var remaining = arguments[...]
        while let word = remaining.first, let subcommand = command.subcommand(word) {
            command = subcommand
            path.append(subcommand.name)
            remaining.removeFirst()
        }
        if Self.asksForHelp(remaining) || (remaining.first == "help" && !command.subcommands.isEmpty)
            || (remaining.isEmpty && command.run == nil && path.count == 1) {
            print(command.help(path: path))
            return 0
        }
        do throws(UsageError) {
            guard let run = command.run else {
                let known = command.subcommands.map(\.name).joined(separator: ", ")
                throw UsageError(remaining.first.map { "unknown command '\($0)'; commands: \(known)" } ?? "expected a command: \(known)")
            }
            return try run(try command.parse(Array(remaining), path: path))
        } catch {
            let invocation = path.joined(separator: " ")
            Self.writeError("\(invocation): \(error)\n\nrun '\(invocation) --help' for usage\n")
            return Self.usageStatus
        }
    }

    private static func writeError(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
