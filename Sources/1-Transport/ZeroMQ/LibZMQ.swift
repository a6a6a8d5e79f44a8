import CZMQ

/// Facts about the libzmq this process is linked with.
public enum LibZMQ {
    /// An optional feature libzmq may have been built with (`zmq_has`).
    public enum Capability: String, CaseIterable, Sendable {
        /// Inter-process transport over Unix domain sockets.
        case ipc
        /// Reliable multicast (PGM).
        case pgm
        /// TIPC transport.
        case tipc
        /// NORM transport.
        case norm
        /// CURVE encryption and authentication.
        case curve
        /// GSSAPI (Kerberos) security.
        case gssapi
        /// Draft API.
        case draft
    }

    /// The library's version (`zmq_version`), e.g. `4.3.4`.
    public static var version: String {
        var major: Int32 = 0, minor: Int32 = 0, patch: Int32 = 0
        zmq_version(&major, &minor, &patch)
        return "\(major).\(minor).\(patch)"
    }

    /// Whether the library was built with `capability` (`zmq_has`).
    public static func has(_ capability: Capability) -> Bool {
        zmq_has(capability.rawValue) != 0
    }
}
