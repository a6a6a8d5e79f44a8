import Foundation
import ZeroMQ

/// Runs `body` against a ROUTER on its own thread that answers each MDP/Client request
/// itself with the same body: what a round trip costs without a broker and worker.
func directEchoReference<Result>(context: Context, _ body: (String) throws -> Result) throws -> Result {
    let ready = DispatchSemaphore(value: 0)
    let endpoint = LockedEndpoint()
    let stop = LockedEndpoint()
    let thread = Thread {
        do {
            let router = try context.socket(.router)
            try router.bind("tcp://127.0.0.1:*")
            endpoint.set(try router.lastEndpoint)
            ready.signal()
            var poller = Poller()
            try poller.add(router)
            var frames: [Message] = []
            while stop.get() == nil {
                try poller.poll(timeout: .milliseconds(50))
                while true {
                    let count = try router.receiveMultipart(into: &frames, options: .dontWait)
                    if count == 0 { break }
                    // [client, tag, "", MDPC01, service, body...] goes back unchanged as the reply,
                    // each frame handed over without a copy: as little work per message as libzmq allows.
                    for index in 0..<count {
                        try router.send(frames[index], options: index < count - 1 ? [.dontWait, .more] : .dontWait)
                    }
                }
            }
            router.close()
        } catch {
            FileHandle.standardError.write(Data("mdp-bench: reference echo failed: \(error)\n".utf8))
            exit(1)
        }
    }
    thread.start()
    ready.wait()
    defer { stop.set("stop") }
    return try body(endpoint.get()!)
}

/// A string handed between the benchmark's threads.
final class LockedEndpoint: @unchecked Sendable {
    // NSLock guards `value`, which is why the class may be shared.
    private let lock = NSLock()
    private var value: String?

    func set(_ newValue: String) { lock.withLock { value = newValue } }
    func get() -> String? { lock.withLock { value } }
}
