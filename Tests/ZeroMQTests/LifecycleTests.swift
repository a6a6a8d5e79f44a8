import Foundation
import LyceumTestSupport
import Testing
import ZeroMQ

@Suite("Errors, polling, shutdown and closing")
struct LifecycleTests {
    @Test("Binding an endpoint in use is a typed error naming the endpoint")
    func bindConflict() throws {
        let context = try Context()
        let first = try context.socket(.router)
        try first.bind("tcp://127.0.0.1:*")
        let endpoint = try first.lastEndpoint
        let second = try context.socket(.router)
        let error = try #require(throws: ZMQError.self) { try second.bind(endpoint) }
        #expect(error.code == .addressInUse)
        #expect(error.endpoint == endpoint)
        #expect(error.description == "bind \(endpoint): Address already in use")
    }

    @Test("Malformed endpoints and closed sockets are typed errors, not crashes")
    func malformedEndpointsAndClosedSockets() throws {
        let context = try Context()
        let socket = try context.socket(.dealer)
        #expect(throws: ZMQError.self) { try socket.connect("tcp://") }
        let unknownTransport = try #require(throws: ZMQError.self) { try socket.bind("carrier-pigeon://x") }
        #expect(unknownTransport.code == .transportNotSupported)
        socket.close()
        socket.close()
        #expect(socket.isClosed)
        let closed = try #require(throws: ZMQError.self) { try socket.send([1]) }
        #expect(closed.operation == "send")
    }

    @Test("The poller times out when nothing is ready and reports sockets and descriptors that are")
    func poller() throws {
        let context = try Context()
        let pull = try context.socket(.pull)
        try pull.bind("inproc://poller")
        let push = try context.socket(.push)
        try push.connect("inproc://poller")
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        defer { close(descriptors[0]); close(descriptors[1]) }

        var poller = Poller()
        let socketIndex = try poller.add(pull)
        let pipeIndex = poller.add(fileDescriptor: descriptors[0])
        let clock = ContinuousClock()
        let start = clock.now
        #expect(try poller.poll(timeout: .milliseconds(60)) == 0)
        #expect(clock.now - start >= .milliseconds(55))

        try push.send([42])
        #expect(try poller.poll(timeout: .seconds(5)) == 1)
        #expect(poller.events(at: socketIndex) == .readable)
        #expect(poller.events(at: pipeIndex).isEmpty)

        #expect(write(descriptors[1], "x", 1) == 1)
        #expect(try poller.poll(timeout: .seconds(5)) == 2)
        #expect(poller.events(at: pipeIndex) == .readable)
        #expect(try pull.events.contains(.readable))
    }

    @Test("The socket waiter wakes for a message and for its descriptor, and times out otherwise")
    func socketWaiter() throws {
        let context = try Context()
        let pull = try context.socket(.pull)
        try pull.bind("inproc://waiter")
        let push = try context.socket(.push)
        try push.connect("inproc://waiter")
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        defer { close(descriptors[0]); close(descriptors[1]) }

        var waiter = try SocketWaiter(pull, fileDescriptor: descriptors[0])
        let clock = ContinuousClock()
        var start = clock.now
        try waiter.wait(timeout: .milliseconds(60))
        #expect(clock.now - start >= .milliseconds(55))

        // After a receive that found nothing, a wait that skips ZMQ_EVENTS still wakes for
        // the next message.
        #expect(try pull.receive(options: .dontWait) == nil)
        try push.send([42])
        start = clock.now
        try waiter.wait(timeout: .hangLimit, checkingFirst: false)
        #expect(clock.now - start < .hangLimit)
        #expect(try pull.receive(options: .dontWait) == [42])

        // A message already there is found by the check, without sleeping.
        try push.send([43])
        start = clock.now
        try waiter.wait(timeout: .hangLimit)
        #expect(clock.now - start < .hangLimit)
        #expect(try pull.receive(options: .dontWait) == [43])

        #expect(try pull.receive(options: .dontWait) == nil)
        #expect(write(descriptors[1], "x", 1) == 1)
        start = clock.now
        try waiter.wait(timeout: .hangLimit, checkingFirst: false)
        #expect(clock.now - start < .hangLimit)
    }

    @Test("A waiter over several sockets tells which one, or which descriptor, woke it")
    func socketWaiterOverSeveralSockets() throws {
        let context = try Context()
        var pulls: [Socket] = []
        var pushes: [Socket] = []
        for index in 0..<2 {
            let pull = try context.socket(.pull)
            try pull.bind("inproc://waiter-\(index)")
            let push = try context.socket(.push)
            try push.connect("inproc://waiter-\(index)")
            pulls.append(pull)
            pushes.append(push)
        }
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        defer { close(descriptors[0]); close(descriptors[1]) }
        var waiter = try SocketWaiter(sockets: pulls, fileDescriptors: [descriptors[0]])
        // Settle what binding and connecting left for the sockets to process.
        for pull in pulls { #expect(try pull.receive(options: .dontWait) == nil) }

        try pushes[1].send([7])
        try waiter.waitForDescriptors(timeout: .seconds(5))
        #expect(waiter.socketMayBeReady(1))
        #expect(!waiter.socketMayBeReady(0))
        #expect(!waiter.descriptorIsReadable(0))
        #expect(try pulls[1].receive(options: .dontWait) == [7])
        #expect(try pulls[1].receive(options: .dontWait) == nil)

        #expect(write(descriptors[1], "x", 1) == 1)
        try waiter.waitForDescriptors(timeout: .seconds(5))
        #expect(waiter.descriptorIsReadable(0))
        #expect(!waiter.socketMayBeReady(0) && !waiter.socketMayBeReady(1))
    }

    @Test("Context shutdown unblocks a blocked receive with a terminated error")
    func shutdownUnblocksReceive() throws {
        let context = try Context()
        let blocked = ThreadResult("blocked receiver") { () throws -> ZMQError? in
            let pull = try context.socket(.pull)
            try pull.bind("inproc://never")
            do throws(ZMQError) {
                _ = try pull.receive()
                return nil
            } catch {
                return error
            }
        }
        Thread.sleep(forTimeInterval: 0.1)
        context.shutdown()
        let error = try #require(try blocked.value())
        #expect(error.code == .terminated)
        #expect(error.description.contains("terminated"))
    }

    @Test("Closing a socket with unsent messages and linger 0 does not hang")
    func closeWithUnsentMessages() throws {
        let finished = ThreadResult("closer") { () throws -> Bool in
            let context = try Context()
            let push = try context.socket(.push)
            try push.set(.linger, to: 0)
            // Nobody listens here, so the messages stay queued.
            try push.connect("tcp://127.0.0.1:9")
            for _ in 0..<100 { try push.send([UInt8](repeating: 7, count: 1024), options: .dontWait) }
            push.close()
            return true  // the context terminates here, on release
        }
        #expect(try finished.value())
    }

    @Test("Messages queued at close are still delivered within the default linger")
    func defaultLingerDelivers() throws {
        let context = try Context()
        let pull = try context.socket(.pull)
        try pull.set(.receiveTimeout, to: 5000)
        try pull.bind("tcp://127.0.0.1:*")
        let push = try context.socket(.push)
        #expect(try push.option(.linger) == Socket.defaultLinger)
        try push.connect(try pull.lastEndpoint)
        for number in 0..<2000 { try push.send(withUnsafeBytes(of: Int32(number)) { Array($0) }) }
        push.close()
        for number in 0..<2000 {
            #expect(try pull.receive() == withUnsafeBytes(of: Int32(number)) { Array($0) })
        }
    }

    @Test("Released sockets close themselves, letting the context terminate within the linger")
    func socketsCloseOnRelease() throws {
        let finished = ThreadResult("releaser") { () throws -> Bool in
            let context = try Context()
            for _ in 0..<10 {
                let push = try context.socket(.push)
                try push.connect("tcp://127.0.0.1:9")
                try push.send([1], options: .dontWait)
            }
            return true
        }
        #expect(try finished.value())
    }
}
