import Majordomo
import Testing
import ZeroMQ

/// Lyceum's clients driven by a plain ROUTER playing the broker.
@Suite struct ClientConformanceTests {
    static let empty: [UInt8] = []
    static let header = bytes("MDPC01")

    @Test func requestFramesAndAReplyForAnotherServiceIsRejected() throws {
        let context = try Context()
        let router = try context.socket(.router)
        try router.bind("tcp://127.0.0.1:*")
        let endpoint = try router.lastEndpoint
        let client = AsyncClient(endpoint: endpoint, configuration: ClientConfiguration(timeout: .seconds(3), attempts: 1), context: context)
        let id = try client.send("echo", body: [bytes("a"), [0x00]])

        let request = try #require(try receive(router))
        #expect(Array(request.dropFirst()) == [Self.empty, Self.header, bytes("echo"), bytes("a"), [0x00]])
        let address = request[0]
        try router.send(multipart: [address, Self.empty, Self.header, bytes("other"), bytes("wrong")])
        try router.send(multipart: [address, Self.empty, bytes("MDPC02"), bytes("echo"), bytes("wrong")])
        try router.send(multipart: [address, Self.empty, Self.header, bytes("echo"), bytes("right")])
        let completion = try #require(try client.receive(timeout: .seconds(3)))
        #expect(completion.id == id)
        #expect(try completion.result.get() == [bytes("right")])
    }

    @Test func retriesOnANewSocketThenTimesOut() throws {
        let context = try Context()
        let router = try context.socket(.router)
        try router.bind("tcp://127.0.0.1:*")
        let client = quickClient(try router.lastEndpoint, context: context, timeout: .milliseconds(200), attempts: 3)
        #expect {
            try client.call("echo", body: [bytes("x")])
        } throws: { ($0 as? MajordomoError)?.code == .timedOut }
        var senders: Set<[UInt8]> = []
        while let frames = try receive(router, timeout: .milliseconds(100)) { senders.insert(frames[0]) }
        #expect(senders.count == 3, "each attempt comes from a new socket")
    }

    @Test func noBrokerIsUnreachableNotTimedOut() throws {
        let context = try Context()
        // Bind then close to get a port nobody listens on.
        let probe = try context.socket(.router)
        try probe.bind("tcp://127.0.0.1:*")
        let endpoint = try probe.lastEndpoint
        probe.close()
        let client = quickClient(endpoint, context: context, timeout: .milliseconds(200), attempts: 2)
        #expect {
            try client.call("echo", body: [])
        } throws: { ($0 as? MajordomoError)?.code == .brokerUnreachable }
    }

    @Test func tooManyInFlightIsATypedError() throws {
        let context = try Context()
        let client = AsyncClient(endpoint: "tcp://127.0.0.1:1", capacity: 1, context: context)
        _ = try client.send("echo", body: [])
        #expect {
            _ = try client.send("echo", body: [])
        } throws: { ($0 as? MajordomoError)?.code == .tooManyInFlight }
        #expect {
            _ = try Client(endpoint: "tcp://127.0.0.1:1", context: context).call("", body: [])
        } throws: { ($0 as? MajordomoError)?.code == .invalidArgument }
    }
}
