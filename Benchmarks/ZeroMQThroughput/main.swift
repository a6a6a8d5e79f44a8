// The Swift side of the PUSH→PULL throughput benchmark; pushpull.c is the C reference.
// Usage: zmq-throughput reused|array COUNT SIZE — prints messages per second.
import Foundation
import LyceumSupport
import ZeroMQ

let arguments = CommandLine.arguments
guard arguments.count == 4, let count = Int(arguments[2]), let size = Int(arguments[3]),
      ["reused", "array"].contains(arguments[1]) else {
    FileHandle.standardError.write(Data("usage: zmq-throughput reused|array COUNT SIZE\n".utf8))
    exit(2)
}
let receivesIntoReusedMessage = arguments[1] == "reused"

do {
    let context = try Context()
    let pull = try context.socket(.pull)
    try pull.bind("tcp://127.0.0.1:*")
    let endpoint = try pull.lastEndpoint

    let sender = Thread {
        do {
            let push = try context.socket(.push)
            try push.connect(endpoint)
            let frame = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 1)
            frame.initializeMemory(as: UInt8.self, repeating: 0)
            for _ in 0..<count { try push.send(UnsafeRawBufferPointer(frame)) }
            frame.deallocate()
        } catch {
            FileHandle.standardError.write(Data("zmq-throughput: \(error)\n".utf8))
            exit(1)
        }
    }
    sender.start()

    let message = Message()
    _ = try pull.receive(into: message)
    let clock = ContinuousClock()
    let start = clock.now
    var received = 0
    if receivesIntoReusedMessage {
        for _ in 1..<count where try pull.receive(into: message) { received += message.count }
    } else {
        for _ in 1..<count { received += try pull.receive()?.count ?? 0 }
    }
    let elapsed = clock.now - start
    precondition(received == (count - 1) * size, "lost bytes")
    let seconds = elapsed.seconds
    print(String(format: "%.0f", Double(count - 1) / seconds))
} catch {
    FileHandle.standardError.write(Data("zmq-throughput: \(error)\n".utf8))
    exit(1)
}
