import Glibc
import Synchronization

/// systemd's watchdog (`WatchdogSec=`): when `$WATCHDOG_USEC` is set for this process, the
/// thread that serves requests calls ``pet(now:)`` on every pass of its loop, and `WATCHDOG=1`
/// is sent at most every half interval; a thread wedged for the whole interval sends nothing, and
/// systemd restarts the unit.
public final class Watchdog: Sendable {
    /// How often `WATCHDOG=1` is sent: half systemd's interval, as `sd_watchdog_enabled(3)` advises.
    public let petInterval: Duration
    private let notifier: SystemdNotifier
    private let nextPet: Mutex<ContinuousClock.Instant>

    /// The watchdog systemd asked for (`$WATCHDOG_USEC`, for this process when
    /// `$WATCHDOG_PID` is set), or `nil` when it asked for none or there is no `$NOTIFY_SOCKET`.
    public static func fromEnvironment() -> Watchdog? {
        guard let notifier = SystemdNotifier.fromEnvironment(),
              let text = getenv("WATCHDOG_USEC").map({ String(cString: $0) }), let microseconds = Int64(text), microseconds > 0
        else { return nil }
        if let pid = getenv("WATCHDOG_PID").map({ String(cString: $0) }), Int32(pid) != getpid() { return nil }
        return Watchdog(interval: .microseconds(microseconds), notifier: notifier)
    }

    /// A watchdog of systemd's `interval`, sending to `notifier`.
    public init(interval: Duration, notifier: SystemdNotifier) {
        petInterval = interval / 2
        self.notifier = notifier
        nextPet = Mutex(.now)
    }

    /// Says the calling thread is alive: sends `WATCHDOG=1` when half an interval has passed
    /// since the last one. Cheap enough for every pass of a loop.
    public func pet(now: ContinuousClock.Instant = .now) {
        let due = nextPet.withLock { next in
            guard now >= next else { return false }
            next = now + petInterval
            return true
        }
        if due { notifier.notify("WATCHDOG=1") }
    }
}
