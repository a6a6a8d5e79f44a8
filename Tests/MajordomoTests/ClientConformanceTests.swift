import LyceumTestSupport
import Foundation
import Majordomo
import Testing
import ZeroMQ

/// Lyceum's clients driven by a plain ROUTER playing the broker.
@Suite struct ClientConformanceTests {
    static let empty: [UInt8] = []
    static let header = bytes("MDPC01")

    @Test("a signaled wakeup ends an AsyncClient's wait at once, with its request still in flight")
    func asyncClientWakeup() throws {
        let context = try Context()
        // A broker that takes the request and never answers.
        let router = try context.socket(.router)
        try router.bind("tcp://127.0.0.1:*")
        let wakeup = try WakeupPipe()
        let client = AsyncClient(endpoint: try router.lastEndpoint, configuration: ClientConfiguration(timeout: .seconds(3600), attempts: 1),
                                 context: context, wakeup: wakeup)
        defer { client.close() }
        _ = try client.send("echo", body: [bytes("a")])
        let signaler = Thread {
            pause(milliseconds: 200)
            wakeup.signal()
        }
        signaler.start()
        let start = ContinuousClock.now
        let completion = try client.receive()
        let waited = ContinuousClock.now - start
        #expect(completion == nil)
        #expect(waited < .hangLimit, "receive waited \(waited) for its hour-long timeout instead of the wakeup")
        #expect(client.inFlight == 1)
    }

    @Test func synchronousRequestFramesAndAReplyForAnotherServiceIsIgnored() throws {
        let context = try Context()
        let endpoint = Locked<String?>(nil)
        let seen = Locked<Result<[[UInt8]], ZMQError>?>(nil)
        let brokerSide = Thread {
            // Plays the broker: a wrong reply, a malformed one, then the right one.
            seen.set(Result { () throws(ZMQError) in
                let router = try context.socket(.router)
                try router.bind("tcp://127.0.0.1:*")
                endpoint.set(try router.lastEndpoint)
                var poller = Poller()
                try poller.add(router)
                guard try poller.poll(timeout: .seconds(3)) > 0, let request = try router.receiveMultipart() else { return [] }
                let address = request[0]
                try router.send(multipart: [address, Self.empty, Self.header, bytes("other"), bytes("wrong")])
                try router.send(multipart: [address, Self.empty, bytes("MDPC02"), bytes("echo"), bytes("wrong")])
                try router.send(multipart: [address, Self.empty, Self.header, bytes("echo"), bytes("right")])
                pause(milliseconds: 200)
                return request
            })
        }
        brokerSide.start()
        #expect(eventually { endpoint.get() != nil })
        let client = quickClient(try #require(endpoint.get()), context: context, timeout: .seconds(3), attempts: 1)
        #expect(try client.call("echo", body: [bytes("a"), [0x00]]) == [bytes("right")])
        #expect(eventually { seen.get() != nil })
        let request = try #require(try seen.get()?.get())
        #expect(Array(request.dropFirst()) == [Self.empty, Self.header, bytes("echo"), bytes("a"), [0x00]])
    }

    @Test func asyncRequestsCarryATagAndRepliesMatchInAnyOrder() throws {
        let context = try Context()
        let router = try context.socket(.router)
        try router.bind("tcp://127.0.0.1:*")
        let client = AsyncClient(endpoint: try router.lastEndpoint, configuration: ClientConfiguration(timeout: .seconds(3), attempts: 1), context: context)
        let first = try client.send("echo", body: [bytes("first")])
        let second = try client.send("echo", body: [bytes("second")])
        let requests = [try #require(try receive(router)), try #require(try receive(router))]
        for request in requests {
            #expect(request.count == 6)
            #expect(request[1].count == 8, "one routing frame: the request's tag")
            #expect(Array(request[2...4]) == [Self.empty, Self.header, bytes("echo")])
        }
        // Replies in reverse order, plus one under an unknown tag and one for another service.
        let (address, firstTag, secondTag) = (requests[0][0], requests[0][1], requests[1][1])
        try router.send(multipart: [address, [UInt8](repeating: 9, count: 8), Self.empty, Self.header, bytes("echo"), bytes("stale")])
        try router.send(multipart: [address, secondTag, Self.empty, Self.header, bytes("other"), bytes("wrong")])
        try router.send(multipart: [address, secondTag, Self.empty, Self.header, bytes("echo"), bytes("reply 2")])
        try router.send(multipart: [address, firstTag, Self.empty, Self.header, bytes("echo"), bytes("reply 1")])
        let a = try #require(try client.receive(timeout: .seconds(3)))
        let b = try #require(try client.receive(timeout: .seconds(3)))
        #expect(a.id == second)
        #expect(try a.result.get() == [bytes("reply 2")])
        #expect(b.id == first)
        #expect(try b.result.get() == [bytes("reply 1")])
    }

    @Test("one wait over two AsyncClients hands back each reply with the client that sent its request")
    func receiveFromSeveralClients() throws {
        let context = try Context()
        let (firstBroker, secondBroker) = (try context.socket(.router), try context.socket(.router))
        try firstBroker.bind("tcp://127.0.0.1:*")
        try secondBroker.bind("tcp://127.0.0.1:*")
        let configuration = ClientConfiguration(timeout: .seconds(30), attempts: 1)
        let wakeup = try WakeupPipe()
        let first = AsyncClient(endpoint: try firstBroker.lastEndpoint, configuration: configuration, context: context, wakeup: wakeup)
        let second = AsyncClient(endpoint: try secondBroker.lastEndpoint, configuration: configuration, context: context, wakeup: wakeup)
        defer { first.close(); second.close() }
        let firstID = try first.send("echo", body: [bytes("to first")])
        let secondID = try second.send("echo", body: [bytes("to second")])
        let (toFirst, toSecond) = (try #require(try receive(firstBroker)), try #require(try receive(secondBroker)))

        // The second broker answers while the first keeps its request.
        try secondBroker.send(multipart: [toSecond[0], toSecond[1], Self.empty, Self.header, bytes("echo"), bytes("from second")])
        let fromSecond = try #require(try AsyncClient.receive(from: [first, second], timeout: .seconds(10)))
        #expect(fromSecond.client === second && fromSecond.completion.id == secondID)
        #expect(try fromSecond.completion.result.get() == [bytes("from second")])

        // A shared wakeup ends the wait over both.
        wakeup.signal()
        #expect(try AsyncClient.receive(from: [first, second], timeout: .seconds(10)) == nil)
        #expect(first.inFlight == 1)

        try firstBroker.send(multipart: [toFirst[0], toFirst[1], Self.empty, Self.header, bytes("echo"), bytes("from first")])
        let fromFirst = try #require(try AsyncClient.receive(from: [first, second], timeout: .seconds(10)))
        #expect(fromFirst.client === first && fromFirst.completion.id == firstID)
        #expect(try fromFirst.completion.result.get() == [bytes("from first")])
        #expect(try AsyncClient.receive(from: [first, second]) == nil, "nothing in flight: no wait")
    }

    @Test func retriesOnANewSocketThenTimesOut() throws {
        let context = try Context()
        let router = try context.socket(.router)
        try router.bind("tcp://127.0.0.1:*")
        let client = quickClient(try router.lastEndpoint, context: context, timeout: .milliseconds(200), attempts: 3)
        #expect {
            try client.call("echo", body: [bytes("x")])
        } throws: { ($0 as? MajordomoError)?.code == .timedOut }
        // Each attempt's request reaches the router, if late on a loaded machine (a closed
        // socket's linger delivers it): wait for three senders, a hang limit per message.
        var senders: Set<[UInt8]> = []
        while senders.count < 3, let frames = try receive(router, timeout: .seconds(10)) { senders.insert(frames[0]) }
        #expect(senders.count == 3, "each attempt comes from a new socket")
        #expect(try receive(router, timeout: .milliseconds(100)) == nil, "three attempts, no more")
    }

    @Test func noBrokerIsUnreachableNotTimedOut() throws {
        let context = try Context()
        // Port 1 is privileged: no test can be listening there, so connections are refused.
        let client = quickClient("tcp://127.0.0.1:1", context: context, timeout: .milliseconds(200), attempts: 2)
        #expect {
            try client.call("echo", body: [])
        } throws: { ($0 as? MajordomoError)?.code == .brokerUnreachable }
    }

    /// A broker that is down costs an attempt its connection wait, not its reply timeout: the
    /// error says which wait ran out (the reply timeout here is ten minutes).
    @Test func anAttemptWithNoConnectionEndsAtItsConnectTimeout() throws {
        let context = try Context()
        let configuration = ClientConfiguration(timeout: .seconds(600), attempts: 2, connectTimeout: .milliseconds(200))
        let client = Client(endpoint: "tcp://127.0.0.1:1", configuration: configuration, context: context)
        defer { client.close() }
        #expect {
            try client.call("echo", body: [])
        } throws: { error in
            let error = error as? MajordomoError
            return error?.code == .brokerUnreachable && error?.detail == "no connection after 2 attempts of 0.2 seconds"
        }
    }

    @Test func asyncClientTellsUnreachableFromTimedOut() throws {
        let context = try Context()
        let configuration = ClientConfiguration(timeout: .milliseconds(200), attempts: 2)
        let unreachable = AsyncClient(endpoint: "tcp://127.0.0.1:1", configuration: configuration, context: context)
        _ = try unreachable.send("echo", body: [])
        let refused = try #require(try unreachable.receive(timeout: .seconds(2)))
        #expect(throws: MajordomoError.self) { try refused.result.get() }
        if case .failure(let error) = refused.result { #expect(error.code == .brokerUnreachable) }

        let silent = try context.socket(.router)
        try silent.bind("tcp://127.0.0.1:*")
        let ignored = AsyncClient(endpoint: try silent.lastEndpoint, configuration: configuration, context: context)
        _ = try ignored.send("echo", body: [])
        let timedOut = try #require(try ignored.receive(timeout: .seconds(2)))
        if case .failure(let error) = timedOut.result { #expect(error.code == .timedOut) } else { Issue.record("expected a failure") }
        var tags: Set<[UInt8]> = []
        while let frames = try receive(silent, timeout: .milliseconds(100)) { tags.insert(frames[1]) }
        #expect(tags.count == 2, "the retry goes under a new tag")
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
