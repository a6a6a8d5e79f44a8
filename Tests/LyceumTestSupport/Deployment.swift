import Foundation
import LyceumTestSupport
import LyceumServer
import Majordomo
@testable import ServiceHosting
import Testing
import ZeroMQ

/// `lyceum serve` on free loopback ports (broker, events, snapshots) with a data directory of its
/// own, and a client for it.
final class Server: @unchecked Sendable {
    let endpoint: String
    /// Where the server publishes progress events.
    let eventsEndpoint: String
    /// Where the server answers event snapshot requests.
    let snapshotEndpoint: String
    let dataDirectory: String
    private(set) var process: LyceumProcess
    private let extraArguments: [String]
    private let descriptorLimit: Int?

    /// Starts `lyceum serve` (with at most `descriptorLimit` open descriptors when given) and
    /// waits until every service has registered a worker.
    init(dataDirectory: String, arguments: [String] = [], descriptorLimit: Int? = nil) throws {
        endpoint = try freeLoopbackEndpoint()
        eventsEndpoint = try freeLoopbackEndpoint()
        snapshotEndpoint = try freeLoopbackEndpoint()
        self.dataDirectory = dataDirectory
        extraArguments = ["--events-endpoint", eventsEndpoint, "--snapshot-endpoint", snapshotEndpoint] + arguments
        self.descriptorLimit = descriptorLimit
        process = try Self.start(endpoint: endpoint, dataDirectory: dataDirectory, arguments: extraArguments, descriptorLimit: descriptorLimit)
        try waitUntilServing()
    }

    deinit { process.stop() }

    /// Stops the server with `signal` and starts it again on the same endpoint and data, under
    /// `launcher` when given (e.g. `strace` injecting a fault), which then ends with `lyceum`.
    /// - Returns: the stopped process's exit status.
    @discardableResult
    func restart(after signal: Int32 = SIGTERM, launcher: [String] = []) throws -> Int32? {
        let status = process.signal(signal)
        process = try Self.start(
            endpoint: endpoint, dataDirectory: dataDirectory, arguments: extraArguments, descriptorLimit: descriptorLimit, launcher: launcher)
        try waitUntilServing()
        return status
    }

    /// Sends one frame to `service` and returns the reply, parsed.
    func call(_ service: String, _ json: String) throws -> [String: Any] {
        let reply = try call(service, frames: [Array(json.utf8)])
        try #require(reply.count == 1, "expected one reply frame, got \(reply.count)")
        return try parse(reply[0])
    }

    /// Sends `frames` to `service` and returns the reply frames.
    func call(_ service: String, frames: [[UInt8]]) throws -> [[UInt8]] {
        let context = try Context()
        let client = Client(endpoint: endpoint, configuration: ClientConfiguration(timeout: .seconds(5), attempts: 1), context: context)
        defer { client.close() }
        return try client.call(service, body: frames)
    }

    private func waitUntilServing() throws {
        try LyceumTestSupport.waitUntilServing(ServiceRegistry.standard.names, at: endpoint) { "stderr:\n\(process.standardError)" }
    }

    private static func start(
        endpoint: String, dataDirectory: String, arguments: [String], descriptorLimit: Int?, launcher: [String] = []
    ) throws -> LyceumProcess {
        try LyceumProcess(
            ["serve", "--endpoint", endpoint, "--data", dataDirectory] + arguments,
            launcher: descriptorLimit.map { ["/usr/bin/prlimit", "--nofile=\($0):\($0)", "--"] } ?? launcher)
    }
}

/// Parses a reply frame as a JSON object.
func parse(_ frame: [UInt8]) throws -> [String: Any] {
    let object = try JSONSerialization.jsonObject(with: Data(frame))
    return try #require(object as? [String: Any], "the reply is not a JSON object: \(String(decoding: frame, as: UTF8.self))")
}

extension Dictionary where Key == String, Value == Any {
    /// Whether this reply is `{"ok": true, …}`.
    var isOK: Bool { self["ok"] as? Bool == true }
    /// The `result` of a success reply.
    var result: [String: Any] { self["result"] as? [String: Any] ?? [:] }
    /// The `error.code` of an error reply.
    var errorCode: String? { (self["error"] as? [String: Any])?["code"] as? String }
}
