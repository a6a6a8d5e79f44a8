import Foundation

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
        now: { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) },
        makeID: { UUID().uuidString.lowercased() }
    )
}
