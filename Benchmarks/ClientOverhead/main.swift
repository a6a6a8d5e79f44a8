// Client overhead over raw MDP: the same catalog reads through a bare AsyncClient (a prebuilt
// request frame, the reply left undecoded) and through LyceumClient (typed call, JSON encoding,
// the hop to the client's thread and back, the reply decoded into structs), one at a time and
// 32 in flight. Not a test: Benchmarks/client-overhead.sh starts a serve and runs it.
//
// Usage: client-overhead <broker endpoint> [seconds per row, default 2]
import Foundation
import LyceumClient
import Majordomo
import ZeroMQ

let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: client-overhead <broker endpoint> [seconds]\n".utf8))
    exit(2)
}
let broker = arguments[1]
let seconds = arguments.count > 2 ? Double(arguments[2]) ?? 2 : 2
let clock = ContinuousClock()

/// Requests per second of `window` requests kept in flight through a bare AsyncClient for `seconds`.
func rawRate(op body: String, window: Int) throws -> Double {
    let client = AsyncClient(endpoint: broker, capacity: window, configuration: ClientConfiguration(timeout: .seconds(5), attempts: 1), context: try Context())
    defer { client.close() }
    let frame = Array(body.utf8)
    var done = 0
    let start = clock.now
    let end = start + .seconds(seconds)
    for _ in 0..<window { _ = try client.send("catalog", body: [frame]) }
    while clock.now < end {
        guard let completion = try client.receive() else { continue }
        _ = try completion.result.get()
        done += 1
        _ = try client.send("catalog", body: [frame])
    }
    return Double(done) / (clock.now - start).seconds
}

/// Requests per second of `window` tasks each calling `call` in a loop for `seconds`.
func clientRate(window: Int, _ call: @escaping @Sendable (LyceumClient) async throws -> Void) async throws -> Double {
    let lyceum = try LyceumClient(configuration: LyceumClientConfiguration(brokers: [broker], timeout: .seconds(5), attempts: 1))
    defer { lyceum.close() }
    let start = clock.now
    let end = start + .seconds(seconds)
    let done = try await withThrowingTaskGroup(of: Int.self) { group in
        for _ in 0..<window {
            group.addTask {
                var count = 0
                while ContinuousClock.now < end {
                    try await call(lyceum)
                    count += 1
                }
                return count
            }
        }
        return try await group.reduce(0, +)
    }
    return Double(done) / (clock.now - start).seconds
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

let operations: [(name: String, body: String, call: @Sendable (LyceumClient) async throws -> Void)] = [
    ("list_categories", #"{"op":"list_categories"}"#, { _ = try await $0.catalog.listCategories() }),
    ("get_course 1", #"{"op":"get_course","course":"1"}"#, { _ = try await $0.catalog.getCourse("1") }),
]
print("| operation | in flight | raw MDP req/s | LyceumClient req/s | raw / client | µs added per request |")
print("|---|---:|---:|---:|---:|---:|")
for operation in operations {
    for window in [1, 32] {
        let raw = try rawRate(op: operation.body, window: window)
        let client = try await clientRate(window: window, operation.call)
        // Latency added per round trip, meaningful one at a time; with many in flight the ratio says it.
        let added = window == 1 ? String(format: "%.1f", 1e6 / client - 1e6 / raw) : "–"
        print("| \(operation.name) | \(window) | \(Int(raw)) | \(Int(client)) | \(String(format: "%.2f", raw / client)) | \(added) |")
    }
}
