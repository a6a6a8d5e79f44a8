import LyceumLogging

/// The constants of 7/MDP (https://rfc.zeromq.org/spec/7/) and 8/MMI.
public enum MDP {
    /// `MDPC01`: the protocol frame of every MDP/Client command.
    public static let clientHeader: [UInt8] = Array("MDPC01".utf8)
    /// `MDPW01`: the protocol frame of every MDP/Worker command.
    public static let workerHeader: [UInt8] = Array("MDPW01".utf8)
    /// `MDPC02`: the protocol frame of every 18/MDP client command (``MDPDialect``).
    public static let clientHeader18: [UInt8] = Array("MDPC02".utf8)
    /// `MDPW02`: the protocol frame of every 18/MDP worker command (``MDPDialect``).
    public static let workerHeader18: [UInt8] = Array("MDPW02".utf8)
    /// Services whose names start with this are answered by the broker itself (8/MMI).
    public static let managementPrefix: [UInt8] = Array("mmi.".utf8)
    /// The one 8/MMI service: is a service registered?
    public static let serviceQuery: [UInt8] = Array("mmi.service".utf8)
    /// MMI answer: at least one worker registered for the service.
    public static let found: [UInt8] = Array("200".utf8)
    /// MMI answer: no worker registered for the service.
    public static let notFound: [UInt8] = Array("404".utf8)
    /// MMI answer: no such management service.
    public static let notImplemented: [UInt8] = Array("501".utf8)

    /// The longest service name a broker accepts, in bytes: 7/MDP's service names are short
    /// printable strings, and a name is echoed in every reply to it.
    public static let maxServiceNameBytes = 255

    /// Why `name` is no 7/MDP service name (longer than ``maxServiceNameBytes``, or a byte that
    /// is not printable ASCII: a space, a control, anything non-ASCII), as a phrase that quotes at
    /// most an excerpt of it; `nil` when it is one. The broker refuses requests and READYs
    /// for such names, and Lyceum's clients refuse to send them.
    public static func serviceNameProblem(_ name: some Collection<UInt8>) -> String? {
        if name.count > maxServiceNameBytes {
            return "is \(name.count) bytes long, more than the \(maxServiceNameBytes) a service name may have"
        }
        if let offset = name.firstIndex(where: { !(0x21...0x7E).contains($0) }).map({ name.distance(from: name.startIndex, to: $0) }) {
            return "has a byte that is not printable ASCII (no space) at offset \(offset): \(PeerText.excerpt(name))"
        }
        return nil
    }

    /// Whether a worker may register `name`, or a broker answer it locally: not empty, and
    /// outside the `mmi.` names the broker keeps for itself.
    static func isOrdinaryService(_ name: String) -> Bool {
        !name.isEmpty && !name.utf8.starts(with: managementPrefix)
    }
}

/// Why a message is not a valid MDP command; logged by whoever drops it.
public struct ProtocolViolation: Error, Equatable, Sendable, CustomStringConvertible {
    /// A sentence naming the rule broken, such as `expected 3 frames, got 4`.
    public let description: String

    init(_ description: String) { self.description = description }
}
