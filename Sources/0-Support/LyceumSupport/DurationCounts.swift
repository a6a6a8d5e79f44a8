// The counts are named after the units, like `Duration`'s own `.milliseconds(_:)`, so that a
// call site reads `timeout.milliseconds`; every integer count is rounded toward zero unless its
// name says otherwise.
extension Duration {
    /// The whole milliseconds in the duration, rounded toward zero, saturating at `Int64`'s limits.
    public var milliseconds: Int64 { count(per: 1_000_000_000_000_000, roundingUp: false) }

    /// The milliseconds in the duration rounded up (toward positive infinity), saturating: what a
    /// wait in milliseconds (`poll`, a semaphore) needs so that it never ends before the duration.
    public var millisecondsRoundedUp: Int64 { count(per: 1_000_000_000_000_000, roundingUp: true) }

    /// The whole microseconds in the duration, rounded toward zero, saturating.
    public var microseconds: Int64 { count(per: 1_000_000_000_000, roundingUp: false) }

    /// The whole nanoseconds in the duration, rounded toward zero, saturating.
    public var nanoseconds: Int64 { count(per: 1_000_000_000, roundingUp: false) }

    /// The duration in seconds as a `Double`, for rates and metrics (not exact beyond about 2⁵³ ns).
    public var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// How many `unit`s (in attoseconds) the duration holds, computed in 128 bits so that no
    /// duration overflows before the result is clamped.
    private func count(per unit: Int128, roundingUp: Bool) -> Int64 {
        let (seconds, attoseconds) = components
        // Most durations (every request's latency) are short and positive: counted in 64 bits,
        // exactly, where a 128-bit division cost about 450 instructions a request (issue 26).
        // `unit` divides a second, so the seconds contribute whole units.
        if seconds >= 0, seconds < 1 << 32, attoseconds >= 0 {
            let unit = Int64(unit)
            let (quotient, remainder) = attoseconds.quotientAndRemainder(dividingBy: unit)
            return seconds * (1_000_000_000_000_000_000 / unit) + quotient + (roundingUp && remainder != 0 ? 1 : 0)
        }
        let total = Int128(components.seconds) * 1_000_000_000_000_000_000 + Int128(components.attoseconds)
        var quotient = total / unit
        // Division truncates toward zero, which already rounds a negative total up.
        if roundingUp, total > 0, total % unit != 0 { quotient += 1 }
        return Int64(clamping: quotient)
    }
}
