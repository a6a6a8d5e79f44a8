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
    /// every call on Linux; the system generator uses `getrandom` without a file descriptor.
    @Sendable static func randomUUID() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes = withUnsafeBytes(of: (generator.next() as UInt64, generator.next() as UInt64)) { Array($0) }
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        let hex: StaticString = "0123456789abcdef"
        var text: [UInt8] = []
        text.reserveCapacity(36)
        for (index, byte) in bytes.enumerated() {
            if index == 4 || index == 6 || index == 8 || index == 10 { text.append(UInt8(ascii: "-")) }
            text.append(hex.utf8Start[Int(byte >> 4)])
            text.append(hex.utf8Start[Int(byte & 0xF)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
