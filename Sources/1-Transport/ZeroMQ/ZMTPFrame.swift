/// The size of frames on the wire under ZMTP 3 with the NULL mechanism (RFC 23): a flags byte,
/// then the size in one byte (up to 255) or eight, then the bytes.
public enum ZMTPFrame {
    /// Largest frame whose size fits the short, one-byte form.
    public static let largestShortFrame = 255

    /// The bytes a frame of `count` bytes takes on the wire.
    @inlinable
    public static func wireSize(of count: Int) -> UInt64 {
        UInt64(count) + (count <= largestShortFrame ? 2 : 9)
    }
}
