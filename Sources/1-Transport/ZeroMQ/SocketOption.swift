import CZMQ

/// A value that a socket option holds, in the byte form `zmq_setsockopt` takes.
public protocol SocketOptionValue: Sendable {
    /// The most bytes libzmq may write when the option is read.
    static var optionCapacity: Int { get }
    /// The bytes handed to `zmq_setsockopt`.
    var optionBytes: [UInt8] { get }
    /// Decodes the bytes `zmq_getsockopt` wrote.
    init(optionBytes: UnsafeRawBufferPointer)
}

extension Int32: SocketOptionValue {
    /// Four bytes, native byte order.
    public static var optionCapacity: Int { 4 }
    /// The value as libzmq's `int`.
    public var optionBytes: [UInt8] { withUnsafeBytes(of: self) { Array($0) } }
    /// Reads libzmq's `int`.
    public init(optionBytes: UnsafeRawBufferPointer) { self = optionBytes.loadUnaligned(as: Int32.self) }
}

extension Int64: SocketOptionValue {
    /// Eight bytes, native byte order.
    public static var optionCapacity: Int { 8 }
    /// The value as libzmq's `int64_t`.
    public var optionBytes: [UInt8] { withUnsafeBytes(of: self) { Array($0) } }
    /// Reads libzmq's `int64_t`.
    public init(optionBytes: UnsafeRawBufferPointer) { self = optionBytes.loadUnaligned(as: Int64.self) }
}

extension Bool: SocketOptionValue {
    /// Four bytes: libzmq's boolean options are `int`s.
    public static var optionCapacity: Int { 4 }
    /// 1 or 0 as libzmq's `int`.
    public var optionBytes: [UInt8] { Int32(self ? 1 : 0).optionBytes }
    /// Any non-zero `int` is true.
    public init(optionBytes: UnsafeRawBufferPointer) { self = Int32(optionBytes: optionBytes) != 0 }
}

extension Array: SocketOptionValue where Element == UInt8 {
    /// Routing ids and CURVE keys are at most 255 bytes.
    public static var optionCapacity: Int { 255 }
    /// The bytes as they are.
    public var optionBytes: [UInt8] { self }
    /// The bytes as they are.
    public init(optionBytes: UnsafeRawBufferPointer) { self.init(optionBytes) }
}

extension String: SocketOptionValue {
    /// Endpoints and domains are at most 1 KiB.
    public static var optionCapacity: Int { 1024 }
    /// The UTF-8 bytes, without a terminator.
    public var optionBytes: [UInt8] { Array(utf8) }
    /// The text up to the first NUL, which libzmq appends to strings it returns.
    public init(optionBytes: UnsafeRawBufferPointer) {
        self = String(decoding: optionBytes.prefix { $0 != 0 }, as: UTF8.self)
    }
}

/// A typed libzmq socket option: its `ZMQ_*` number and the Swift type of its value.
public struct SocketOption<Value: SocketOptionValue>: Sendable {
    /// The `ZMQ_*` option number.
    public let number: Int32
    /// The option's libzmq name, used in error reports.
    public let name: String

    /// Names any libzmq option, for those that have no static member here.
    public init(number: Int32, name: String) {
        self.number = number
        self.name = name
    }
}

extension SocketOption where Value == Int32 {
    /// Milliseconds unsent messages are kept after close; -1 forever (`ZMQ_LINGER`).
    public static var linger: Self { .init(number: ZMQ_LINGER, name: "ZMQ_LINGER") }
    /// Messages queued for sending per peer before sends block or drop (`ZMQ_SNDHWM`).
    public static var sendHighWaterMark: Self { .init(number: ZMQ_SNDHWM, name: "ZMQ_SNDHWM") }
    /// Messages queued for receiving per peer (`ZMQ_RCVHWM`).
    public static var receiveHighWaterMark: Self { .init(number: ZMQ_RCVHWM, name: "ZMQ_RCVHWM") }
    /// Milliseconds a send waits before giving up; -1 forever (`ZMQ_SNDTIMEO`).
    public static var sendTimeout: Self { .init(number: ZMQ_SNDTIMEO, name: "ZMQ_SNDTIMEO") }
    /// Milliseconds a receive waits before giving up; -1 forever (`ZMQ_RCVTIMEO`).
    public static var receiveTimeout: Self { .init(number: ZMQ_RCVTIMEO, name: "ZMQ_RCVTIMEO") }
    /// TCP keepalive: 1 on, 0 off, -1 the system's default (`ZMQ_TCP_KEEPALIVE`).
    public static var tcpKeepalive: Self { .init(number: ZMQ_TCP_KEEPALIVE, name: "ZMQ_TCP_KEEPALIVE") }
    /// Seconds idle before the first keepalive probe (`ZMQ_TCP_KEEPALIVE_IDLE`).
    public static var tcpKeepaliveIdle: Self { .init(number: ZMQ_TCP_KEEPALIVE_IDLE, name: "ZMQ_TCP_KEEPALIVE_IDLE") }
    /// Seconds between keepalive probes (`ZMQ_TCP_KEEPALIVE_INTVL`).
    public static var tcpKeepaliveInterval: Self { .init(number: ZMQ_TCP_KEEPALIVE_INTVL, name: "ZMQ_TCP_KEEPALIVE_INTVL") }
    /// Milliseconds between ZMTP heartbeat pings; 0 off (`ZMQ_HEARTBEAT_IVL`).
    public static var heartbeatInterval: Self { .init(number: ZMQ_HEARTBEAT_IVL, name: "ZMQ_HEARTBEAT_IVL") }
    /// Milliseconds to wait for a ping's answer before dropping the connection (`ZMQ_HEARTBEAT_TIMEOUT`).
    public static var heartbeatTimeout: Self { .init(number: ZMQ_HEARTBEAT_TIMEOUT, name: "ZMQ_HEARTBEAT_TIMEOUT") }
    /// Milliseconds the peer should keep the connection without pings (`ZMQ_HEARTBEAT_TTL`).
    public static var heartbeatTimeToLive: Self { .init(number: ZMQ_HEARTBEAT_TTL, name: "ZMQ_HEARTBEAT_TTL") }
    /// Milliseconds before the first reconnection attempt (`ZMQ_RECONNECT_IVL`).
    public static var reconnectInterval: Self { .init(number: ZMQ_RECONNECT_IVL, name: "ZMQ_RECONNECT_IVL") }
    /// Upper bound of the exponential reconnection back-off; 0 none (`ZMQ_RECONNECT_IVL_MAX`).
    public static var reconnectIntervalMax: Self { .init(number: ZMQ_RECONNECT_IVL_MAX, name: "ZMQ_RECONNECT_IVL_MAX") }
    /// The `ZMQ_POLL*` bits the socket is ready for; read-only (`ZMQ_EVENTS`).
    public static var events: Self { .init(number: ZMQ_EVENTS, name: "ZMQ_EVENTS") }
    /// A descriptor that becomes readable when the socket has something new to process; it
    /// says nothing about messages by itself (see ``SocketWaiter``); read-only (`ZMQ_FD`).
    public static var fileDescriptor: Self { .init(number: ZMQ_FD, name: "ZMQ_FD") }
}

extension SocketOption where Value == Int64 {
    /// Largest inbound message accepted before the peer is disconnected; -1 no limit (`ZMQ_MAXMSGSIZE`).
    public static var maxMessageSize: Self { .init(number: ZMQ_MAXMSGSIZE, name: "ZMQ_MAXMSGSIZE") }
}

extension SocketOption where Value == Bool {
    /// A ROUTER fails with `EHOSTUNREACH` instead of dropping messages for unknown peers (`ZMQ_ROUTER_MANDATORY`).
    public static var routerMandatory: Self { .init(number: ZMQ_ROUTER_MANDATORY, name: "ZMQ_ROUTER_MANDATORY") }
    /// Queue messages only to completed connections (`ZMQ_IMMEDIATE`).
    public static var immediate: Self { .init(number: ZMQ_IMMEDIATE, name: "ZMQ_IMMEDIATE") }
    /// This socket is a CURVE server (`ZMQ_CURVE_SERVER`).
    public static var curveServer: Self { .init(number: ZMQ_CURVE_SERVER, name: "ZMQ_CURVE_SERVER") }
    /// Deliver every subscription message to an XPUB, duplicates included (`ZMQ_XPUB_VERBOSE`).
    public static var extendedPublisherVerbose: Self { .init(number: ZMQ_XPUB_VERBOSE, name: "ZMQ_XPUB_VERBOSE") }
}

extension SocketOption where Value == [UInt8] {
    /// The identity a ROUTER peer sees for this socket, 1–255 bytes (`ZMQ_ROUTING_ID`).
    public static var routingID: Self { .init(number: ZMQ_ROUTING_ID, name: "ZMQ_ROUTING_ID") }
    /// Receive messages starting with this prefix; empty for all (`ZMQ_SUBSCRIBE`).
    public static var subscribe: Self { .init(number: ZMQ_SUBSCRIBE, name: "ZMQ_SUBSCRIBE") }
    /// Remove a subscription made with ``subscribe`` (`ZMQ_UNSUBSCRIBE`).
    public static var unsubscribe: Self { .init(number: ZMQ_UNSUBSCRIBE, name: "ZMQ_UNSUBSCRIBE") }
    /// This socket's long-term CURVE public key, 32 bytes (`ZMQ_CURVE_PUBLICKEY`).
    public static var curvePublicKey: Self { .init(number: ZMQ_CURVE_PUBLICKEY, name: "ZMQ_CURVE_PUBLICKEY") }
    /// This socket's long-term CURVE secret key, 32 bytes (`ZMQ_CURVE_SECRETKEY`).
    public static var curveSecretKey: Self { .init(number: ZMQ_CURVE_SECRETKEY, name: "ZMQ_CURVE_SECRETKEY") }
    /// The CURVE server's public key a client expects, 32 bytes (`ZMQ_CURVE_SERVERKEY`).
    public static var curveServerKey: Self { .init(number: ZMQ_CURVE_SERVERKEY, name: "ZMQ_CURVE_SERVERKEY") }
}

extension SocketOption where Value == String {
    /// The ZAP authentication domain (`ZMQ_ZAP_DOMAIN`).
    public static var zapDomain: Self { .init(number: ZMQ_ZAP_DOMAIN, name: "ZMQ_ZAP_DOMAIN") }
    /// The endpoint last bound or connected, wildcards resolved; read-only (`ZMQ_LAST_ENDPOINT`).
    public static var lastEndpoint: Self { .init(number: ZMQ_LAST_ENDPOINT, name: "ZMQ_LAST_ENDPOINT") }
}

extension Socket {
    /// Sets an option (`zmq_setsockopt`).
    public func set<Value>(_ option: SocketOption<Value>, to value: Value) throws(ZMQError) {
        let handle = try open("setsockopt \(option.name)")
        let bytes = value.optionBytes
        let result = bytes.withUnsafeBytes { zmq_setsockopt(handle, option.number, $0.baseAddress, $0.count) }
        try check(result, "setsockopt \(option.name)")
    }

    /// Reads an option (`zmq_getsockopt`).
    public func option<Value>(_ option: SocketOption<Value>) throws(ZMQError) -> Value {
        let handle = try open("getsockopt \(option.name)")
        var size = Value.optionCapacity
        var buffer = [UInt8](repeating: 0, count: size)
        let result = buffer.withUnsafeMutableBytes { zmq_getsockopt(handle, option.number, $0.baseAddress, &size) }
        try check(result, "getsockopt \(option.name)")
        return buffer.withUnsafeBytes { Value(optionBytes: UnsafeRawBufferPointer(rebasing: $0.prefix(size))) }
    }
}
