import Books
import Foundation
import LyceumSupport

/// What services take from the outside world: the clock and fresh ids. Tests inject fixed ones
/// so that replies are reproducible.
public struct ServiceEnvironment: Sendable {
    /// Milliseconds since 1970 (UTC).
    public var now: @Sendable () -> Int64
    /// A fresh lowercase UUID string.
    public var makeID: @Sendable () -> String
    /// Milliseconds since 1970 for what no reply shows: when a request-ledger entry was recorded,
    /// which decides how long it is kept. Apart from `now` so that a test's fixed or ticking
    /// clock keeps its replies reproducible.
    public var ledgerClock: @Sendable () -> Int64

    /// An environment with these clocks and id source.
    public init(
        now: @escaping @Sendable () -> Int64, makeID: @escaping @Sendable () -> String,
        ledgerClock: @escaping @Sendable () -> Int64 = { RFC3339.currentMillisecondsSince1970() }
    ) {
        self.now = now
        self.makeID = makeID
        self.ledgerClock = ledgerClock
    }

    /// The system clock and random version-4 UUIDs.
    public static let live = ServiceEnvironment(
        now: { RFC3339.currentMillisecondsSince1970() },
        makeID: randomUUID
    )

    /// A random (version 4) UUID in lowercase. Foundation's `UUID()` opens `/dev/urandom` on
    /// every call on Linux; `RandomPool` reads the kernel generator once per 256 UUIDs.
    @Sendable static func randomUUID() -> String {
        var random: (high: UInt64, low: UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &random) { RandomPool.shared.fill($0) }
        return Book.version4ID(random: random)
    }
}
