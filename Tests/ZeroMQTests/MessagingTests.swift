import LyceumTestSupport
import Testing
import ZeroMQ

/// Frames that text-minded code gets wrong: NULs, invalid UTF-8, empty frames.
let awkwardFrames: [[UInt8]] = [
    [0x00, 0x01, 0x00, 0xFF],
    [0xC3, 0x28, 0xA0, 0xA1, 0xF0, 0x28, 0x8C, 0xBC],
    [],
    Array("plain".utf8),
]

@Suite("Messaging over real sockets")
struct MessagingTests {
    let context: Context

    init() throws { context = try Context() }

    /// A socket that gives up on receives after `milliseconds` instead of hanging a failing test.
    func socket(_ type: SocketType, timeout milliseconds: Int32 = 5000) throws -> Socket {
        let socket = try context.socket(type)
        try socket.set(.receiveTimeout, to: milliseconds)
        try socket.set(.sendTimeout, to: milliseconds)
        return socket
    }

    @Test("DEALER/ROUTER multipart with binary frames", arguments: ["inproc://dealer-router", "tcp://127.0.0.1:*"])
    func dealerRouterMultipart(endpoint: String) throws {
        let router = try socket(.router)
        try router.bind(endpoint)
        let dealer = try socket(.dealer)
        try dealer.set(.routingID, to: [0x00, 0xFE, 0x41])
        try dealer.connect(try router.lastEndpoint)

        try dealer.send(multipart: awkwardFrames)
        let received = try #require(try router.receiveMultipart())
        #expect(received == [[0x00, 0xFE, 0x41]] + awkwardFrames)

        try router.send(multipart: [[0x00, 0xFE, 0x41]] + awkwardFrames.reversed())
        #expect(try dealer.receiveMultipart() == awkwardFrames.reversed())
    }

    @Test("Frames received into reused messages are forwarded as they are", arguments: ["inproc://forward", "tcp://127.0.0.1:*"])
    func receiveIntoMessagesAndForward(endpoint: String) throws {
        let router = try socket(.router)
        try router.bind(endpoint)
        let dealer = try socket(.dealer)
        try dealer.connect(try router.lastEndpoint)
        var frames: [Message] = []

        #expect(try router.receiveMultipart(into: &frames, options: .dontWait) == 0)
        try dealer.send(multipart: awkwardFrames)
        let count = try router.receiveMultipart(into: &frames)
        #expect(count == 1 + awkwardFrames.count)
        #expect(frames[1..<count].map(\.bytes) == awkwardFrames)

        // The routing id and the frames go back without a copy; each sent message is left empty.
        for index in 0..<count {
            #expect(try router.send(frames[index], options: index < count - 1 ? .more : []))
            #expect(frames[index].count == 0)
        }
        #expect(try dealer.receiveMultipart() == awkwardFrames)

        // A shorter message reuses the messages it finds instead of adding any.
        try dealer.send(multipart: [[0x07]])
        #expect(try router.receiveMultipart(into: &frames) == 2)
        #expect(frames[1].bytes == [0x07] && !frames[1].hasMore)
        #expect(frames.count == count)
    }

    @Test("Receiving with the frames' bytes gives each frame's bytes, replacing those of the last message")
    func receiveWithBytes() throws {
        let router = try socket(.router)
        try router.bind("inproc://bytes")
        let dealer = try socket(.dealer)
        try dealer.connect("inproc://bytes")
        var frames: [Message] = []
        var bytes: [UnsafeRawBufferPointer] = [UnsafeRawBufferPointer(start: nil, count: 0)]

        #expect(try router.receiveMultipart(into: &frames, bytes: &bytes, options: .dontWait) == 0)
        #expect(bytes.isEmpty)
        try dealer.send(multipart: awkwardFrames)
        let count = try router.receiveMultipart(into: &frames, bytes: &bytes)
        #expect(bytes.count == count)
        #expect(bytes[1...].map { Array($0) } == awkwardFrames)
        #expect(Array(bytes[0]) == frames[0].bytes)
    }

    @Test("A 16 MiB frame over TCP and a 100 MB frame in-process arrive intact")
    func largeFrames() throws {
        for (endpoint, size) in [("tcp://127.0.0.1:*", 16 << 20), ("inproc://large", 100_000_000)] {
            let pull = try socket(.pull, timeout: 30_000)
            try pull.bind(endpoint)
            let push = try socket(.push, timeout: 30_000)
            try push.connect(try pull.lastEndpoint)
            var frame = [UInt8](repeating: 0, count: size)
            for index in stride(from: 0, to: size, by: 4093) { frame[index] = UInt8(truncatingIfNeeded: index &* 31) }
            frame[size - 1] = 0xFF

            try push.send(frame)
            let message = Message()
            #expect(try pull.receive(into: message))
            #expect(message.count == size)
            #expect(message.bytes == frame)
        }
    }

    @Test("REQ/REP across two threads")
    func requestReplyAcrossThreads() throws {
        let context = self.context
        let rep = try socket(.reply)
        try rep.bind("tcp://127.0.0.1:*")
        let endpoint = try rep.lastEndpoint
        let client = ThreadResult("requester") { () throws -> [[UInt8]] in
            let req = try context.socket(.request)
            try req.set(.receiveTimeout, to: 5000)
            try req.connect(endpoint)
            var replies: [[UInt8]] = []
            for number in 0..<100 {
                try req.send([UInt8(number), 0x00])
                replies.append(try #require(try req.receive()))
            }
            return replies
        }
        for _ in 0..<100 {
            let request = try #require(try rep.receive())
            try rep.send(request.reversed())
        }
        #expect(try client.value() == (0..<100).map { [0x00, UInt8($0)] })
    }

    @Test("PUB/SUB delivers only what matches a subscribed prefix")
    func publishSubscribePrefixFiltering() throws {
        let publisher = try socket(.publisher)
        try publisher.bind("tcp://127.0.0.1:*")
        let subscriber = try socket(.subscriber, timeout: 200)
        try subscriber.set(.subscribe, to: Array("progress/course-1/".utf8))
        try subscriber.set(.subscribe, to: [0x00, 0x01])
        try subscriber.connect(try publisher.lastEndpoint)

        // Subscriptions travel to the publisher asynchronously; publish until one arrives.
        var first: [UInt8]?
        for _ in 0..<50 where first == nil {
            try publisher.send(Array("progress/course-1/warmup".utf8))
            first = try subscriber.receive()
        }
        #expect(first == Array("progress/course-1/warmup".utf8))
        while try subscriber.receive(options: .dontWait) != nil {}

        let published: [[UInt8]] = [
            Array("progress/course-2/alice".utf8), Array("progress/course-1/bob".utf8),
            [0x00, 0x01, 0xFF], [0x00, 0x02], Array("books/alice".utf8), Array("progress/course-1/".utf8),
        ]
        for frame in published { try publisher.send(frame) }
        var received: [[UInt8]] = []
        while let frame = try subscriber.receive() { received.append(frame) }
        #expect(received == [Array("progress/course-1/bob".utf8), [0x00, 0x01, 0xFF], Array("progress/course-1/".utf8)])
    }

    @Test("Non-blocking receive with nothing queued reports would-block as a value")
    func nonBlockingReceive() throws {
        let pull = try socket(.pull)
        try pull.bind("inproc://empty")
        #expect(try pull.receive(options: .dontWait) == nil)
        #expect(try pull.receiveMultipart(options: .dontWait) == nil)
        #expect(try pull.receive(into: Message(), options: .dontWait) == false)
    }

    @Test("A receive timeout expires as a value, not an error")
    func receiveTimeout() throws {
        let pull = try socket(.pull, timeout: 50)
        try pull.bind("inproc://timeout")
        let clock = ContinuousClock()
        let start = clock.now
        #expect(try pull.receive() == nil)
        #expect(clock.now - start >= .milliseconds(45))
    }

    @Test("A send that cannot be queued reports would-block as a value")
    func nonBlockingSend() throws {
        let dealer = try socket(.dealer)
        // A DEALER with no peer has nowhere to queue.
        #expect(try dealer.send([1, 2, 3], options: .dontWait) == false)
    }

    @Test("Sending an empty multipart message is an invalid argument")
    func emptyMultipart() throws {
        let dealer = try socket(.dealer)
        #expect(throws: ZMQError.self) { try dealer.send(multipart: [[UInt8]]()) }
    }
}
