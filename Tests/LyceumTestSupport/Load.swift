import Foundation
import LyceumSupport
import Majordomo
import Synchronization
import ZeroMQ

/// Clients sending requests from threads of their own until `stop()`, recording every outcome,
/// so that a test can change the server under load and then check each request's fate.
public final class Load: Sendable {
    /// One request's fate: the reply frame, or none within the client's timeout and retries.
    public struct Outcome: Sendable {
        public let service: String
        public let request: String
        public let reply: [UInt8]?
        /// When the reply (or the client's giving up) came.
        public var finished = ContinuousClock.now

        /// The reply parsed as a JSON object, or `nil` without a reply.
        public func parsed() throws -> [String: Any]? { try reply.map(parse) }
    }

    /// Set once to stop the clients; a class so that the client threads share it.
    private final class StopFlag: Sendable {
        let isSet = Atomic(false)
    }

    private let stopping = StopFlag()
    private let threads: [ThreadResult<[Outcome]>]

    /// Starts `clients` threads, each with its own client for `endpoint`, sending what `request`
    /// returns for its client number and sequence number. A thread that gets no reply stops when
    /// `untilNoReply` is set (the server is gone), and goes on otherwise.
    public init(
        endpoint: String, clients: Int, configuration: ClientConfiguration = ClientConfiguration(timeout: .seconds(2), attempts: 1),
        untilNoReply: Bool = false, request: @escaping @Sendable (_ client: Int, _ sequence: Int) -> (service: String, body: String)
    ) {
        var threads: [ThreadResult<[Outcome]>] = []
        let stopping = self.stopping
        for clientNumber in 0..<clients {
            threads.append(ThreadResult("load-\(clientNumber)") {
                let context = try Context()
                let client = Client(endpoint: endpoint, configuration: configuration, context: context)
                defer { client.close() }
                var outcomes: [Outcome] = []
                var sequence = 0
                while !stopping.isSet.load(ordering: .relaxed) {
                    let (service, body) = request(clientNumber, sequence)
                    sequence += 1
                    do {
                        let reply = try client.call(service, body: [Array(body.utf8)])
                        outcomes.append(Outcome(service: service, request: body, reply: reply.first))
                    } catch {
                        outcomes.append(Outcome(service: service, request: body, reply: nil))
                        if untilNoReply { break }
                    }
                }
                return outcomes
            })
        }
        self.threads = threads
    }

    /// Lets the load run for `duration`.
    public func run(for duration: Duration) { Thread.sleep(forTimeInterval: duration.seconds) }

    /// Stops the clients and returns every outcome.
    public func stop(within limit: Duration = .seconds(30)) throws -> [Outcome] {
        stopping.isSet.store(true, ordering: .relaxed)
        return try threads.flatMap { try $0.value(within: limit) }
    }
}
