import Foundation
import LyceumTestSupport
import Testing

/// `Type=notify` as systemd sees it: each long-running command sends its states to a real
/// datagram socket named by `$NOTIFY_SOCKET`, as systemd's is.
@Suite struct SystemdNotifyTests {
    /// A broker says `READY=1` once it serves, `WATCHDOG=1` every half `$WATCHDOG_USEC` from
    /// its serving thread, and `STOPPING=1` when SIGTERM starts its drain.
    @Test func aBrokerSaysReadyPetsTheWatchdogAndSaysStopping() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let socket = try NotifySocket(path: directory.path + "/notify")
        let broker = try LyceumProcess(["broker", "--endpoint", try freeLoopbackEndpoint(), "--events-endpoint", "none"],
                                       launcher: ["/usr/bin/env", "NOTIFY_SOCKET=\(socket.path)", "WATCHDOG_USEC=200000"])
        defer { broker.stop() }
        let ready = socket.states(until: "READY=1", timeout: .seconds(60))
        #expect(ready.last == "READY=1", "\(ready)\n\(broker.standardError)")
        // Two pets in a row: the watchdog is fed by a loop, not once.
        let pets = socket.states(until: "WATCHDOG=1", timeout: .seconds(60)) + socket.states(until: "WATCHDOG=1", timeout: .seconds(60))
        #expect(pets.filter { $0 == "WATCHDOG=1" }.count == 2, "\(pets)")
        broker.send(SIGTERM)
        let stopping = socket.states(until: "STOPPING=1", timeout: .seconds(60))
        #expect(stopping.last == "STOPPING=1", "\(stopping)")
        #expect(broker.waitForExit() == 0)
    }

    /// A worker is not ready while no broker has accepted it: `READY=1` comes once a broker runs.
    @Test func aWorkerIsReadyOnceABrokerAcceptsIt() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let socket = try NotifySocket(path: directory.path + "/notify")
        let endpoint = try freeLoopbackEndpoint()
        let worker = try LyceumProcess(["worker", "--broker", endpoint, "--service", "catalog", "--heartbeat-interval", "200",
                                        "--reconnect-initial", "100", "--reconnect-max", "200"],
                                       launcher: ["/usr/bin/env", "NOTIFY_SOCKET=\(socket.path)"])
        defer { worker.stop() }
        #expect(eventually { worker.standardError.contains("worker ready") }, "\(worker.standardError)")
        // Its sessions said READY to nobody for a few heartbeats: still not ready.
        Thread.sleep(forTimeInterval: 0.6)
        let early = socket.states(until: "READY=1", timeout: .milliseconds(1))
        #expect(!early.contains("READY=1"), "ready before any broker ran: \(early)")
        let broker = try LyceumProcess(["broker", "--endpoint", endpoint, "--events-endpoint", "none", "--heartbeat-interval", "200"])
        defer { broker.stop() }
        let ready = socket.states(until: "READY=1", timeout: .seconds(60))
        #expect(ready.last == "READY=1", "\(ready)\n\(worker.standardError)")
    }

    /// With a running systemd, `systemd-run -p Type=notify` starts `lyceum broker` as a
    /// transient unit, which becomes active only through its `READY=1`, and stops it cleanly.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/run/systemd/system"), "systemd is not this machine's init (no /run/systemd/system)"))
    func systemdRunStartsABrokerAsANotifyUnit() throws {
        let unit = "lyceum-notify-test-\(getpid())"
        let endpoint = try freeLoopbackEndpoint()
        // Without --no-block, systemd-run returns once the unit is active: after READY=1.
        let started = try ChildProcess.output(of: "/usr/bin/systemd-run", [
            "--unit", unit, "-p", "Type=notify", "-p", "WatchdogSec=5", "-p", "TimeoutStartSec=60",
            LyceumProcess.executable.path, "broker", "--endpoint", endpoint, "--events-endpoint", "none"])
        let active = try ChildProcess.output(of: "/usr/bin/systemctl", ["is-active", unit])
        let stopped = try ChildProcess.output(of: "/usr/bin/systemctl", ["stop", unit])
        #expect(started.status == 0, "systemd-run: \(started.output)")
        #expect(active.output.trimmingCharacters(in: .whitespacesAndNewlines) == "active", "\(active.output)")
        #expect(stopped.status == 0, "\(stopped.output)")
    }
}

/// A stand-in for systemd's notification socket: a datagram socket bound at `path`.
final class NotifySocket {
    let path: String
    private let descriptor: Int32

    init(path: String) throws {
        self.path = path
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard descriptor >= 0, bound == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EINVAL) }
    }

    deinit { close(descriptor) }

    /// The states received (one datagram may hold several lines) until one equals `state`,
    /// that one included, or until `timeout` passes.
    func states(until state: String, timeout: Duration) -> [String] {
        var states: [String] = []
        let deadline = ContinuousClock.now + timeout
        while !states.contains(state) {
            let left = deadline - ContinuousClock.now
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let milliseconds = max(0, Int32(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000))
            guard poll(&poller, 1, milliseconds) > 0 else { break }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            states += String(decoding: buffer[0..<count], as: UTF8.self).split(separator: "\n").map(String.init)
        }
        return states
    }
}
