import LyceumLifecycle
import Testing

/// `/healthz`'s answer: a loop that passes within its watchdog's interval is alive, one silent
/// for a whole interval is wedged, and passing again makes it alive again. Instants are given,
/// so nothing here depends on how fast the machine is.
struct WatchdogTests {
    @Test func aLoopSilentForAWholeIntervalIsWedgedUntilItPassesAgain() {
        let watchdog = Watchdog(interval: .seconds(10), notifier: nil)
        let start = ContinuousClock.now
        watchdog.pet(now: start)
        #expect(watchdog.silence(now: start + .seconds(9)) == nil)
        #expect(watchdog.silence(now: start + .seconds(10)) == .seconds(10))
        watchdog.pet(now: start + .seconds(12))
        #expect(watchdog.silence(now: start + .seconds(13)) == nil)
    }

    @Test func withoutSystemdItIsTheDefaultIntervalAndTellsNobody() {
        // Tests are not run under systemd's notify socket.
        let watchdog = Watchdog.forProcess()
        #expect(watchdog.interval == Watchdog.defaultInterval && watchdog.petInterval == Watchdog.defaultInterval / 2)
        #expect(watchdog.silence() == nil)
    }
}
