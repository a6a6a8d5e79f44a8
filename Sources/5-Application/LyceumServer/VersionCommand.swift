import ZeroMQ

/// `lyceum version`: Lyceum's version, libzmq's, and libzmq's capabilities.
public enum VersionCommand {
    /// The version of Lyceum this binary was built from.
    public static let lyceumVersion = "0.1.0"

    /// Two lines: `lyceum 0.1.0` and `libzmq 4.3.4 (curve=yes …)`.
    public static func render() -> String {
        let capabilities = LibZMQ.Capability.allCases.map { "\($0.rawValue)=\(LibZMQ.has($0) ? "yes" : "no")" }
        return "lyceum \(lyceumVersion)\nlibzmq \(LibZMQ.version) (\(capabilities.joined(separator: " ")))"
    }
}
