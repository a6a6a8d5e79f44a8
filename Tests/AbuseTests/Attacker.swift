import Foundation
import LyceumTestSupport
import Testing

/// What an attacker script reported in its `RESULT {json}` line: its own findings (latencies,
/// sizes), the peak VmRSS it sampled while attacking and the writes acknowledged meanwhile.
struct Findings: @unchecked Sendable {
    /// The parsed JSON object.
    let values: [String: Any]
    /// Everything the script printed (its progress lines are on stderr, merged in).
    let transcript: String

    /// The highest VmRSS sampled during the attack, in KiB.
    var peakKiB: Int { values["peak_rss_kib"] as? Int ?? 0 }
    /// Books the server acknowledged during the attack: learner, id and title.
    var acknowledged: [(learner: String, id: String, title: String)] {
        (values["acknowledged"] as? [[String: Any]] ?? []).compactMap { write in
            guard let learner = write["learner"] as? String, let id = write["id"] as? String,
                  let title = write["title"] as? String else { return nil }
            return (learner, id, title)
        }
    }

    /// The findings without the acknowledged writes, for messages.
    var summary: [String: Any] { values.filter { $0.key != "acknowledged" } }

    subscript(key: String) -> Any? { values[key] }
}

/// An attacker: a Python script in `Attackers/`, run by Debian's /usr/bin/python3 with pyzmq.
enum Attacker {
    /// The scripts' folder, beside this file.
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Attackers")
    /// `protocol/examples`, which the fuzzer mutates.
    static let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("protocol/examples")

    /// Runs `script` against `target` and returns its findings. A script still running after
    /// `limit` is killed and the test fails there: the attack made something hang.
    static func run(_ script: String, against target: Target, _ arguments: [String] = [], limit: Duration = .seconds(60)) throws -> Findings {
        var common = ["--endpoint", target.endpoint, "--pid", String(target.process.processIdentifier),
                      "--events", target.eventsEndpoint, "--metrics-port", String(target.metricsPort)]
        if let snapshot = target.snapshotEndpoint { common += ["--snapshot", snapshot] }
        // sh merges the script's stderr into the lines ChildProcess collects, then becomes python.
        let child = try ChildProcess("/bin/sh", ["-c", #"exec /usr/bin/python3 -B "$0" "$@" 2>&1"#,
                                                 folder.appendingPathComponent(script).path] + common + arguments)
        defer { child.stop() }
        let status = child.waitForExit(timeout: limit)
        let transcript = child.lines.joined(separator: "\n")
        try #require(status != nil, "\(script) still ran after \(limit): the attack hung it\n\(transcript)")
        try #require(status == 0, "\(script) failed with status \(status!) (lyceum running: \(target.process.isRunning))\n\(transcript)")
        let line = try #require(child.lines.last(where: { $0.hasPrefix("RESULT ") }), "\(script) reported nothing\n\(transcript)")
        let object = try JSONSerialization.jsonObject(with: Data(line.dropFirst("RESULT ".count).utf8))
        return Findings(values: try #require(object as? [String: Any]), transcript: transcript)
    }
}
