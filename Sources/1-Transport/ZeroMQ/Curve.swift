import CZMQ

/// A CURVE long-term key pair, for encrypting and authenticating connections.
public struct CurveKeyPair: Sendable, Equatable {
    /// The public key, 32 bytes; give it to peers.
    public let publicKey: [UInt8]
    /// The secret key, 32 bytes; never give it away or log it.
    public let secretKey: [UInt8]

    /// Pairs keys that were generated before.
    public init(publicKey: [UInt8], secretKey: [UInt8]) {
        self.publicKey = publicKey
        self.secretKey = secretKey
    }

    /// Generates a new random pair (`zmq_curve_keypair`); fails when libzmq lacks CURVE.
    public static func generate() throws(ZMQError) -> CurveKeyPair {
        var publicText = [CChar](repeating: 0, count: 41)
        var secretText = [CChar](repeating: 0, count: 41)
        try check(zmq_curve_keypair(&publicText, &secretText), "zmq_curve_keypair")
        return CurveKeyPair(
            publicKey: try Z85.decode(String(nulTerminated: publicText)),
            secretKey: try Z85.decode(String(nulTerminated: secretText))
        )
    }
}

/// ZeroMQ's Z85 text encoding of binary keys (RFC 32/Z85).
public enum Z85 {
    /// Encodes bytes whose count is a multiple of 4 (`zmq_z85_encode`).
    public static func encode(_ bytes: [UInt8]) throws(ZMQError) -> String {
        guard bytes.count % 4 == 0 else {
            throw ZMQError(code: .invalidArgument, operation: "Z85 encode \(bytes.count) bytes (not a multiple of 4)")
        }
        var text = [CChar](repeating: 0, count: bytes.count / 4 * 5 + 1)
        guard zmq_z85_encode(&text, bytes, bytes.count) != nil else {
            throw ZMQError(code: .invalidArgument, operation: "zmq_z85_encode")
        }
        return String(nulTerminated: text)
    }

    /// Decodes text whose length is a multiple of 5 (`zmq_z85_decode`).
    public static func decode(_ text: String) throws(ZMQError) -> [UInt8] {
        guard text.utf8.count % 5 == 0 else {
            throw ZMQError(code: .invalidArgument, operation: "Z85 decode \(text.utf8.count) characters (not a multiple of 5)")
        }
        var bytes = [UInt8](repeating: 0, count: text.utf8.count / 5 * 4)
        guard zmq_z85_decode(&bytes, text) != nil else {
            throw ZMQError(code: .invalidArgument, operation: "zmq_z85_decode (not Z85 text)")
        }
        return bytes
    }
}

extension String {
    /// The text before the terminating NUL of a C string buffer.
    init(nulTerminated buffer: [CChar]) {
        self = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
