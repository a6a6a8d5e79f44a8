import Foundation
import LyceumTestSupport
import Testing

/// `lyceum status` prints tables to a person at a terminal (a real pseudo-terminal, made by
/// util-linux's `script`) and JSON with `--json` there, and JSON into a pipe, as scripts expect.
@Suite struct StatusTableTests {
    @Test(.enabled(if: PseudoTerminal.script != nil, "util-linux's script is not installed"))
    func aTerminalGetsTablesAndAPipeOrJSONFlagGetsJSON() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let server = try Deployment.serve(data: data.path)
        _ = try server.call("books", #"{"op":"create","learner":"ada","title":"Dune","author":"Frank Herbert","genre":"Fantasy","rating":5}"#)
        let command = "\(LyceumProcess.executable.path) status --broker \(server.endpoint)"

        let onTerminal = try PseudoTerminal.run(command)
        let lines = onTerminal.split(separator: "\n", omittingEmptySubsequences: false).map { String($0) }
        #expect(lines.first?.hasPrefix("serve up ") == true && lines.first?.hasSuffix(", 0 workers, 0 queued requests") == true, "\(onTerminal)")
        // Columns as wide as their widest cell, numbers right-aligned under their headers.
        let header = try #require(lines.first { $0.hasPrefix("SERVICE ") }, "\(onTerminal)")
        #expect(header.hasSuffix(" WORKERS  IDLE  QUEUED"), "\(onTerminal)")
        let catalog = try #require(lines.first { $0.hasPrefix("catalog ") }, "\(onTerminal)")
        #expect(catalog.count == header.count && catalog.hasSuffix("  local     -       0"), "\(onTerminal)")
        #expect(lines.contains { $0.hasPrefix("JOURNAL ") && $0.hasSuffix("LAST SEQ  APPENDS  SYNCS") }, "\(onTerminal)")
        #expect(lines.contains { $0.hasPrefix("books ") && $0.split(separator: " ").dropFirst(2).first == "1" }, "books' last sequence: \(onTerminal)")
        #expect(!onTerminal.contains("{"), "no JSON on a terminal: \(onTerminal)")
        #expect(lines.allSatisfy { !$0.hasSuffix(" ") }, "trailing spaces: \(onTerminal)")

        let forced = try PseudoTerminal.run(command + " --json")
        #expect((try JSONSerialization.jsonObject(with: Data(forced.utf8)) as? [String: Any])?["role"] as? String == "serve", "\(forced)")

        let piped = try LyceumProcess.run(["status", "--broker", server.endpoint])
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect((try JSONSerialization.jsonObject(with: Data(piped.stdout.utf8)) as? [String: Any])?["role"] as? String == "serve", "\(piped.stdout)")
    }
}
