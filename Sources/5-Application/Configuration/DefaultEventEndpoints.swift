/// The endpoints Lyceum's event commands use unless told otherwise (protocol/events.md).
public enum DefaultEventEndpoints {
    /// Where a single process publishes events, and where `lyceum watch` subscribes.
    public static let publish = "tcp://127.0.0.1:5556"
    /// Where a single process answers snapshot requests.
    public static let snapshot = "tcp://127.0.0.1:5557"
    /// Where a forwarder (hosted by `lyceum broker`) takes workers' events in; it republishes
    /// them on ``publish``.
    public static let forwarderInput = "tcp://127.0.0.1:5558"
    /// The `events-endpoint` value that turns publishing off: `serve` publishes no events and
    /// answers no snapshots, `broker` hosts no forwarder.
    public static let none = "none"
}
