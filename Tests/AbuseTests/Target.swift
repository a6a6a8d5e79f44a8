import Foundation
import LyceumTestSupport
import Majordomo
import Testing
import ZeroMQ

/// The Lyceum an attack is aimed at: `lyceum serve`, or `lyceum broker` with one `lyceum worker`
/// behind it, on free loopback ports with a data directory of its own. Its stderr goes to a file
/// (some attacks make it write a lot), and its resident memory is measured once it has served
/// its first requests: the baseline the memory bound is relative to.
final class Target: @unchecked Sendable {
    /// Where clients (and the attackers) send 7/MDP requests.
    let endpoint: String
    /// The XPUB subscribers connect to: `serve`'s publisher or the broker's forwarder.
    let eventsEndpoint: String
    /// `serve`'s snapshot ROUTER; `nil` for a broker.
    let snapshotEndpoint: String?
    /// The loopback port of `GET /metrics`.
    let metricsPort: Int
    /// The attacked process: `serve`, or the broker.
    let process: LyceumProcess
    /// The broker's worker, which serves `books` and `catalog` behind it.
    let worker: LyceumProcess?
    /// The attacked process's stderr.
    let logFile: String
    /// VmRSS of the attacked process after start-up and a few requests, in KiB.
    private(set) var baselineKiB = 0
    private let directory: TemporaryDirectory

    /// Starts `lyceum serve`, optionally through `launcher` (e.g. `prlimit`), and waits for it.
    static func serve(launcher: [String] = [], arguments: [String] = []) throws -> Target {
        try Target(role: .serve, launcher: launcher, arguments: arguments)
    }

    /// Starts `lyceum broker` and a `lyceum worker` for books and catalog, and waits for them.
    static func broker() throws -> Target {
        try Target(role: .broker, launcher: [], arguments: [])
    }

    private enum Role { case serve, broker }

    private init(role: Role, launcher: [String], arguments: [String]) throws {
        directory = try TemporaryDirectory()
        endpoint = try freeLoopbackEndpoint()
        eventsEndpoint = try freeLoopbackEndpoint()
        metricsPort = Int(try freeLoopbackEndpoint().split(separator: ":").last!)!
        logFile = directory.path + "/stderr.log"
        let data = directory.path + "/data"
        let common = ["--endpoint", endpoint, "--events-endpoint", eventsEndpoint, "--metrics-port", String(metricsPort)]
        switch role {
        case .serve:
            let snapshot = try freeLoopbackEndpoint()
            snapshotEndpoint = snapshot
            process = try LyceumProcess(["serve", "--data", data, "--snapshot-endpoint", snapshot] + common + arguments,
                                        launcher: launcher, standardErrorFile: logFile)
            worker = nil
        case .broker:
            let forwarder = try freeLoopbackEndpoint()
            snapshotEndpoint = nil
            process = try LyceumProcess(["broker", "--forwarder-endpoint", forwarder] + common + arguments,
                                        launcher: launcher, standardErrorFile: logFile)
            worker = try LyceumProcess(["worker", "--broker", endpoint, "--forwarder-endpoint", forwarder, "--data", data,
                                        "--service", "books", "--service", "catalog"])
        }
        try waitUntilServing(role == .serve ? ["catalog", "books", "progress"] : ["catalog", "books"], at: endpoint) {
            "stderr:\n" + String(decoding: log().suffix(4000), as: UTF8.self)
        }
        _ = try ordinaryRequests()
        baselineKiB = try #require(residentKiB(), "no VmRSS for the target")
    }

    deinit {
        worker?.stop()
        process.stop()
        directory.remove()
    }

    /// The attacked process's VmRSS in KiB, `nil` once it is gone.
    func residentKiB() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return nil }
        return Int(line.split(separator: " ", omittingEmptySubsequences: true)[1])
    }

    /// What the attacked process has logged so far.
    func log() -> Data { FileManager.default.contents(atPath: logFile) ?? Data() }

    /// A client that gives up at the hang limit `timeout`, without retrying.
    func call(_ service: String, _ json: String, timeout: Duration = .hangLimit) throws -> (reply: [String: Any], elapsed: Duration) {
        let context = try Context()
        let client = Client(endpoint: endpoint, configuration: ClientConfiguration(timeout: timeout, attempts: 1), context: context)
        defer { client.close() }
        let clock = ContinuousClock()
        let started = clock.now
        let frames = try client.call(service, body: [Array(json.utf8)])
        let elapsed = clock.now - started
        let reply = try #require(frames.count == 1 ? try JSONSerialization.jsonObject(with: Data(frames[0])) as? [String: Any] : nil,
                                 "\(service) replied with \(frames.count) frames that are not one JSON object")
        return (reply, elapsed)
    }

    /// A book create, a read of it and a catalog read: what every client does. Each must be
    /// answered `ok`; how fast is a figure to print, not a bound (``call(_:_:timeout:)``'s limit
    /// is for hangs only).
    /// - Returns: the slowest of the three.
    func ordinaryRequests() throws -> Duration {
        let created = try call("books", #"{"op":"create","learner":"ordinary","title":"Dune","author":"Frank Herbert","genre":"Fantasy","rating":5}"#)
        let book = try #require((created.reply["result"] as? [String: Any])?["book"] as? [String: Any], "create: \(created.reply)")
        let id = try #require(book["id"] as? String)
        let read = try call("books", #"{"op":"get","learner":"ordinary","id":"\#(id)"}"#)
        let catalog = try call("catalog", #"{"op":"list_categories"}"#)
        for (name, answer) in [("books create", created), ("books get", read), ("catalog list_categories", catalog)] {
            #expect(answer.reply["ok"] as? Bool == true, "\(name): \(answer.reply)")
        }
        return max(created.elapsed, read.elapsed, catalog.elapsed)
    }
}
