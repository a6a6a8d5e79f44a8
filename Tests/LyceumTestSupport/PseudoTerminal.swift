import Foundation
import Testing

/// Commands run on a real pseudo-terminal, made by util-linux's `script`: what a person at a
/// terminal would see.
public enum PseudoTerminal {
    /// util-linux's `script`, when it is installed.
    public static let script = ["/usr/bin/script", "/bin/script"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// What `command` (a shell command line) printed on a pseudo-terminal, with the terminal's
    /// CRLFs as newlines; expects it to exit 0.
    public static func run(_ command: String) throws -> String {
        let script = try #require(script, "util-linux's script is not installed")
        let finished = try ChildProcess.run(script, ["--quiet", "--return", "--command", command, "/dev/null"])
        #expect(finished.status == 0, "\(command)")
        return finished.standardOutput.replacingOccurrences(of: "\r\n", with: "\n")
    }
}
