import Foundation
import LyceumLifecycle
import LyceumSupport
import ZeroMQ

/// Starts the thread that owns one end of a replication link: libzmq sockets stay on the thread
/// that made them, so the socket is made there, and the caller learns the setup's outcome
/// before it goes on (a bind or connect that fails is the caller's error, not a silent thread).
enum LinkThread {
    /// Runs `open` on a new thread named `name`, then `run` with the socket it made; returns once
    /// `open` is done.
    /// - Throws: what `open` threw; `run` is then never called.
    static func start(name: String, open: @escaping @Sendable () throws -> Socket, run: @escaping @Sendable (Socket) -> Void) throws {
        let setup = AwaitedResult<Void, any Error>()
        let thread = Thread {
            // The kernel's name too (`Thread.name` alone is Foundation's): per-thread figures
            // (`/proc/PID/task`, perf) tell the links apart.
            Thread.nameCurrent(name)
            let socket: Socket
            do {
                socket = try open()
            } catch {
                setup.settle(.failure(error))
                return
            }
            setup.settle(.success(()))
            run(socket)
        }
        thread.start()
        try setup.wait().get()
    }
}
