import Glibc

/// systemd's notification protocol (`sd_notify(3)`), spoken directly: each state is one datagram
/// of `NAME=VALUE` lines sent to the `AF_UNIX` socket named by `$NOTIFY_SOCKET` (a path, or an
/// abstract name written with a leading `@`), so no libsystemd is needed. A unit of
/// `Type=notify` is started once it gets `READY=1`; `STOPPING=1` says the process is draining;
/// `WATCHDOG=1` keeps a unit with `WatchdogSec` from being restarted.
public struct SystemdNotifier: Sendable {
    /// The socket's address as systemd wrote it.
    public let socketPath: String

    /// The notifier of `$NOTIFY_SOCKET`, or `nil` when it is unset (not started by systemd as
    /// `Type=notify`): nobody listens, and nothing is sent.
    public static func fromEnvironment() -> SystemdNotifier? {
        guard let path = getenv("NOTIFY_SOCKET").map({ String(cString: $0) }), !path.isEmpty else { return nil }
        return SystemdNotifier(socketPath: path)
    }

    /// A notifier sending to `socketPath`.
    public init(socketPath: String) {
        self.socketPath = socketPath
    }

    /// Sends `state` (`READY=1`, `STOPPING=1`, `WATCHDOG=1`, `STATUS=…`) as one datagram.
    /// - Returns: `nil` once it was sent, else why not (the path too long, or the errno of
    ///   `socket` or `sendto`), for the caller to log: a notification is never worth a failure.
    @discardableResult
    public func notify(_ state: String) -> String? {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        // An abstract socket's name starts with a zero byte where the text has `@`.
        var path = Array(socketPath.utf8)
        if path.first == UInt8(ascii: "@") { path[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.count < capacity else { return "NOTIFY_SOCKET is \(path.count) bytes, longer than a socket address holds" }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path) }
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return "socket: \(String(cString: strerror(errno)))" }
        defer { close(descriptor) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count + (path.first == 0 ? 0 : 1))
        let bytes = Array(state.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bytes.withUnsafeBytes { sendto(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), socketAddress, length) }
            }
        }
        return sent == bytes.count ? nil : "sendto \(socketPath): \(String(cString: strerror(errno)))"
    }
}
