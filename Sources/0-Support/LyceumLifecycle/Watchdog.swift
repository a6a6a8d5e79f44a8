import Glibc
import Synchronization

/// The liveness of the thread that serves requests (the broker's loop, or the worker pool's),
/// which calls ``pet(now:)`` on every pass of its loop: a thread silent for a whole ``interval``
/// is wedged. It answers `GET /healthz` (``silence(now:)``), and when systemd asked for a
/// watchdog (`WatchdogSec=`, so `$WATCHDOG_USEC` is set for this process) it sends `WATCHDOG=1`
/// at most every half interval; a wedged thread sends nothing, and systemd restarts the unit.
public final class Watchdog: Sendable {
    /// The interval without systemd's: a loop that runs at least every few milliseconds (the
    /// broker's) or every half interval (the worker pool's) is wedged after ten seconds silent.
    public static let defaultInterval = Duration.seconds(10)

    /// How long the thread may be silent before it counts as wedged.
    public let interval: Duration
    /// How often the loop must pass at the least, and `WATCHDOG=1` is sent: half the interval,
    /// as `sd_watchdog_enabled(3)` advises.
    public let petInterval: Duration
    private let notifier: SystemdNotifier?
    private struct Passes {
        var last: ContinuousClock.Instant
        var nextNotification: ContinuousClock.Instant
    }
    private let passes: Mutex<Passes>

    /// The watchdog systemd asked for (`$WATCHDOG_USEC`, for this process when
    /// `$WATCHDOG_PID` is set), or `nil` when it asked for none or there is no `$NOTIFY_SOCKET`.
    public static func fromEnvironment() -> Watchdog? {
        guard let notifier = SystemdNotifier.fromEnvironment(),
              let text = getenv("WATCHDOG_USEC").map({ String(cString: $0) }), let microseconds = Int64(text), microseconds > 0
        else { return nil }
        if let pid = getenv("WATCHDOG_PID").map({ String(cString: $0) }), Int32(pid) != getpid() { return nil }
        return Watchdog(interval: .microseconds(microseconds), notifier: notifier)
    }

    /// The process's watchdog: systemd's when it asked for one, else one of ``defaultInterval``
    /// that tells nobody and only answers `/healthz`.
    public static func forProcess() -> Watchdog {
        fromEnvironment() ?? Watchdog(interval: defaultInterval, notifier: nil)
    }

    /// A watchdog of `interval`, sending `WATCHDOG=1` to `notifier` when there is one. The
    /// thread counts as having passed now, so that its silence is measured from its start.
    public init(interval: Duration, notifier: SystemdNotifier?) {
        self.interval = interval
        petInterval = interval / 2
        self.notifier = notifier
        passes = Mutex(Passes(last: .now, nextNotification: .now))
    }

    /// Says the calling thread is alive; sends `WATCHDOG=1` when half an interval has passed
    /// since the last one. Cheap enough for every pass of a loop.
    public func pet(now: ContinuousClock.Instant = .now) {
        let due = passes.withLock { passes in
            passes.last = now
            guard notifier != nil, now >= passes.nextNotification else { return false }
            passes.nextNotification = now + petInterval
            return true
        }
        if due { notifier?.notify("WATCHDOG=1") }
    }

    /// How long the thread has been silent, when that is a whole ``interval`` or more (it is
    /// wedged); `nil` while it is alive.
    public func silence(now: ContinuousClock.Instant = .now) -> Duration? {
        let silent = now - passes.withLock { $0.last }
        return silent >= interval ? silent : nil
    }
}
