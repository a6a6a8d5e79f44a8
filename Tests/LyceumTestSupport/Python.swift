import Foundation
import Testing

/// Scripts run by Debian's Python (`/usr/bin/python3`, with pyzmq and prometheus_client): peers
/// that share no code with Lyceum. A script is named relative to the calling test file's
/// `Clients/` folder (``run(_:_:file:)``), or, for the scripts several targets run, this
/// module's (``runShared(_:_:)``: `scrape_metrics.py`, `dashboard_http.py`).
public enum Python {
    /// The path of `script` in the `Clients/` folder beside `file` (the caller's, by default).
    public static func path(_ script: String, file: String = #filePath) -> String {
        URL(fileURLWithPath: file).deletingLastPathComponent().appendingPathComponent("Clients/" + script).path
    }

    /// Runs `script` (of the caller's `Clients/`) with `arguments` to completion.
    public static func run(_ script: String, _ arguments: [String], file: String = #filePath) throws -> (status: Int32?, stdout: String, stderr: String) {
        let finished = try ChildProcess.run("/usr/bin/python3", [path(script, file: file)] + arguments)
        return (finished.status, finished.standardOutput, finished.standardError)
    }

    /// The path of `script` in this module's `Clients/`.
    public static func sharedPath(_ script: String) -> String { path(script, file: #filePath) }

    /// Runs `script` of this module's `Clients/` with `arguments` to completion.
    public static func runShared(_ script: String, _ arguments: [String]) throws -> (status: Int32?, stdout: String, stderr: String) {
        try run(script, arguments, file: #filePath)
    }
}

/// One scrape of `GET /metrics`, parsed by prometheus_client (`Clients/scrape_metrics.py`).
public struct Metrics {
    /// The response's `Content-Type`.
    public let contentType: String
    /// Each family's type, by name.
    public let families: [String: String]
    /// Every sample.
    public let samples: [(name: String, labels: [String: String], value: Double)]

    /// Scrapes `http://127.0.0.1:port/metrics`; fails the test when prometheus_client cannot parse it.
    public static func scrape(port: Int) throws -> Metrics {
        let result = try Python.runShared("scrape_metrics.py", ["http://127.0.0.1:\(port)/metrics"])
        try #require(result.status == 0, "prometheus_client could not parse the metrics: \(result.stderr)")
        let object = try parse(Array(result.stdout.utf8))
        let samples = (object["samples"] as? [[Any]] ?? []).map { sample in
            (name: sample[0] as? String ?? "", labels: sample[1] as? [String: String] ?? [:], value: (sample[2] as? NSNumber)?.doubleValue ?? .nan)
        }
        return Metrics(contentType: object["content_type"] as? String ?? "", families: object["families"] as? [String: String] ?? [:], samples: samples)
    }

    /// The sample named `name` whose labels include `labels`; 0 when there is none.
    public func value(_ name: String, _ labels: [String: String] = [:]) -> Double {
        samples.first { sample in sample.name == name && labels.allSatisfy { sample.labels[$0.key] == $0.value } }?.value ?? 0
    }
}
