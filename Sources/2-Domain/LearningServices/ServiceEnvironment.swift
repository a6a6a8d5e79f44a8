import Foundation
import LyceumSupport

/// What services take from the outside world: the clock and fresh ids. Tests inject fixed ones
/// so that replies are reproducible.
public struct ServiceEnvironment: Sendable {
    /// Milliseconds since 1970 (UTC).
    public var now: @Sendable () -> Int64
    /// A fresh lowercase UUID string.
    public var makeID: @Sendable () -> String

    /// An environment with this clock and id source.
    public init(now: @escaping @Sendable () -> Int64, makeID: @escaping @Sendable () -> String) {
        self.now = now
        self.makeID = makeID
    }

    /// The system clock and random version-4 UUIDs.
    public static let live = ServiceEnvironment(
        now: { RFC3339.currentMillisecondsSince1970() },
        makeID: randomUUID
    )

    /// A random (version 4) UUID in lowercase. Foundation's `UUID()` opens `/dev/urandom` on
    /// every call on Linux; `RandomPool` reads the kernel generator once per 256 UUIDs.
    @Sendable static func randomUUID() -> String {
        var random: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &random) { RandomPool.shared.fill($0) }
        return withUnsafeBytes(of: &random) { bytes in
            String(unsafeUninitializedCapacity: 36) { text in
                let hex: StaticString = "0123456789abcdef"
                var written = 0
                for index in 0..<16 {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        text[written] = UInt8(ascii: "-")
                        written += 1
                    }
                    var byte = bytes[index]
                    if index == 6 { byte = byte & 0x0F | 0x40 } // version 4
                    if index == 8 { byte = byte & 0x3F | 0x80 } // the RFC 4122 variant
                    text[written] = hex.utf8Start[Int(byte >> 4)]
                    text[written + 1] = hex.utf8Start[Int(byte & 0xF)]
                    written += 2
                }
                return written
            }
        }
    }
}
