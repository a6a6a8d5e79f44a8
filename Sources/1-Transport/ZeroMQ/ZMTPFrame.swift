/// The size of frames on the wire under ZMTP 3 (RFC 23): a flags byte, then the size in one
/// byte (up to 255) or eight, then the bytes; with CURVE (RFC 26) each frame travels as a
/// MESSAGE command whose body is larger than the frame by ``curveOverhead``.
public enum ZMTPFrame {
    /// Largest frame whose size fits the short, one-byte form.
    public static let largestShortFrame = 255
    /// Bytes CURVE adds to each frame's body: the command name `\x07MESSAGE` (8), the short
    /// nonce (8), the box's authenticator (16) and the flags byte boxed with the data (1), as
    /// libzmq 4.3's `curve_mechanism_base_t::encode` builds it. The frame header is then sized
    /// for the larger body.
    public static let curveOverhead = 33

    /// The bytes a frame of `count` bytes takes on the wire.
    @inlinable
    public static func wireSize(of count: Int) -> UInt64 {
        UInt64(count) + (count <= largestShortFrame ? 2 : 9)
    }
}
