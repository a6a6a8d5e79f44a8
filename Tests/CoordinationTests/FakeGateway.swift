import Foundation
import Glibc
import Synchronization

/// A TCP server on a free loopback port that answers every connection with the bytes of a
/// script, as a broken or hostile etcd endpoint would, then keeps the connection open until
/// released (or closes it, when told to).
final class FakeGateway: Sendable {
    let port: UInt16
    private let listener: Int32
    private let script: [UInt8]
    private let repeatForever: Bool
    private let closeAfterScript: Bool
    /// The connections open, and whether `stop()` was called.
    private let state = Mutex((connections: [Int32](), stopped: false))

    /// - Parameters:
    ///   - script: the bytes sent to every connection after its request arrives.
    ///   - repeatForever: keep sending the script again and again (an endless response).
    ///   - closeAfterScript: close the connection after the script.
    init(script: [UInt8], repeatForever: Bool = false, closeAfterScript: Bool = false) throws {
        self.script = script
        self.repeatForever = repeatForever
        self.closeAfterScript = closeAfterScript
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(listener, generic, length) == 0 && listen(listener, 8) == 0 && getsockname(listener, generic, &length) == 0
            }
        }
        guard bound else { close(listener); throw POSIXError(.EADDRINUSE) }
        self.listener = listener
        port = UInt16(bigEndian: address.sin_port)
        let thread = Thread { [self] in serve() }
        thread.start()
    }

    var endpoint: String { "http://127.0.0.1:\(port)" }

    // Each descriptor is closed only by the thread that uses it, after `stop()` has shut it
    // down: a descriptor closed under a thread still using it could be reused by the next
    // test's gateway or client, which that thread would then write into or shut down (a
    // connection of the next test's client, cut: `connectionLost` instead of what it tested).
    private func serve() {
        defer { close(listener) }
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            let accepted = state.withLock { state in
                guard !state.stopped else { return false }
                state.connections.append(connection)
                return true
            }
            guard accepted else {
                close(connection)
                return
            }
            Thread { [self] in answer(connection) }.start()
        }
    }

    private func answer(_ connection: Int32) {
        defer {
            state.withLock { state in
                state.connections.removeAll { $0 == connection }
                close(connection)
            }
        }
        var request = [UInt8](repeating: 0, count: 4096)
        _ = recv(connection, &request, request.count, 0)
        repeat {
            var sent = 0
            while sent < script.count {
                let count = script[sent...].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                guard count > 0 else { return }
                sent += count
            }
        } while repeatForever && !state.withLock({ $0.stopped })
        if closeAfterScript { shutdown(connection, Int32(SHUT_RDWR)) }
        // Held open until the client closes it or `stop()` shuts it down: closing it with the
        // client's request unread would reset it before the client has read the answer.
        while recv(connection, &request, request.count, 0) > 0 {}
    }

    func stop() {
        state.withLock { state in
            state.stopped = true
            shutdown(listener, Int32(SHUT_RDWR))
            for connection in state.connections { shutdown(connection, Int32(SHUT_RDWR)) }
        }
    }
}
