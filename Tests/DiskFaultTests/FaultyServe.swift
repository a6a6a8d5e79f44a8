import Foundation
import LyceumTestSupport
import Majordomo
import Testing
import ZeroMQ

/// `lyceum serve` on free loopback ports with a data directory of its own, started under a
/// `launcher` that injects a fault (`fiu-run`, `faketime`, `strace`), and a client for it.
final class FaultyServe: @unchecked Sendable {
    let endpoint: String
    let dataDirectory: String
    private(set) var process: LyceumProcess
    private let arguments: [String]

    /// The services `serve` answers.
    static let services = ["catalog", "books", "progress"]

    /// Starts `serve` under `launcher` on `dataDirectory` and waits until it serves.
    init(dataDirectory: String, arguments: [String] = [], launcher: [String] = []) throws {
        endpoint = try freeLoopbackEndpoint()
        self.dataDirectory = dataDirectory
        self.arguments = ["serve", "--endpoint", endpoint, "--data", dataDirectory,
                          "--events-endpoint", try freeLoopbackEndpoint(), "--snapshot-endpoint", try freeLoopbackEndpoint()] + arguments
        process = try LyceumProcess(self.arguments, launcher: launcher)
        try waitUntilServing()
    }

    deinit { process.stop() }

    /// Starts `serve` again on the same endpoints and data (the last one must have ended), under
    /// `launcher` when given.
    func start(launcher: [String] = []) throws {
        process.stop()
        process = try LyceumProcess(arguments, launcher: launcher)
        try waitUntilServing()
    }

    /// Sends one request to `service` and returns the reply, parsed; throws `MajordomoError`
    /// when no reply came within `timeout`.
    func call(_ service: String, _ json: String, timeout: Duration = .seconds(5)) throws -> [String: Any] {
        let context = try Context()
        let client = Client(endpoint: endpoint, configuration: ClientConfiguration(timeout: timeout, attempts: 1), context: context)
        defer { client.close() }
        let reply = try client.call(service, body: [Array(json.utf8)])
        try #require(reply.count == 1, "expected one reply frame, got \(reply.count)")
        let object = try JSONSerialization.jsonObject(with: Data(reply[0]))
        return try #require(object as? [String: Any], "the reply is not a JSON object: \(String(decoding: reply[0], as: UTF8.self))")
    }

    /// Every book id of `learner`, page after page.
    func bookIDs(of learner: String) throws -> Set<String> {
        var found = Set<String>()
        var cursor: String?
        repeat {
            let page = try call("books", #"{"op":"list","learner":"\#(learner)","limit":100\#(cursor.map { #","cursor":"\#($0)""# } ?? "")}"#)
            try #require(page.isOK, "list failed: \(page)")
            found.formUnion((page.result["books"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String })
            cursor = page.result["next_cursor"] as? String
        } while cursor != nil
        return found
    }

    private func waitUntilServing() throws {
        try LyceumTestSupport.waitUntilServing(Self.services, at: endpoint) { "stderr:\n\(process.standardError)" }
    }
}

/// A create of a book by `learner`, retried safely under `requestID`.
func createBook(learner: String, title: String, requestID: String) -> String {
    #"{"op":"create","request_id":"\#(requestID)","learner":"\#(learner)","title":"\#(title)","author":"A","genre":"Kids","rating":3}"#
}

extension Dictionary where Key == String, Value == Any {
    /// Whether this reply is `{"ok": true, …}`.
    var isOK: Bool { self["ok"] as? Bool == true }
    /// The `result` of a success reply.
    var result: [String: Any] { self["result"] as? [String: Any] ?? [:] }
    /// The `error` object of an error reply.
    var error: [String: Any] { self["error"] as? [String: Any] ?? [:] }
    /// The `error.code` of an error reply.
    var errorCode: String? { error["code"] as? String }
    /// The created book's id.
    var bookID: String? { (result["book"] as? [String: Any])?["id"] as? String }
}
