import Foundation
import LyceumLogging
import LyceumSupport

/// A lease granted by etcd and kept alive by a thread of its own, with the holder's side of the
/// lease's safety rule: ``mayAct(at:)`` is true only within ``LeaseTiming/actingWindow`` of the
/// sending of the last successful renewal, so it turns false before etcd can expire the lease.
/// Once lost (etcd says it expired, or no renewal succeeded within the window) a keeper stays
/// lost: its holder takes a new lease.
public final class LeaseKeeper: @unchecked Sendable {
    /// The lease etcd granted.
    public let lease: Lease
    /// The timings it is kept by.
    public let timing: LeaseTiming
    private let client: EtcdClient
    private let logger: Logger
    private let onLoss: @Sendable (CoordinationError) -> Void
    // `condition` guards the three below; the keep-alive thread waits on it between renewals.
    private let condition = NSCondition()
    private var lastRenewalSent: ContinuousClock.Instant
    private var lost: CoordinationError?
    private var stopped = false

    /// Grants a lease with `timing` and starts renewing it.
    /// - Parameter onLoss: called once, on the keeper's thread, when the lease is lost.
    public init(client: EtcdClient, timing: LeaseTiming, name: String, onLoss: @escaping @Sendable (CoordinationError) -> Void = { _ in }) throws(CoordinationError) {
        let sent = ContinuousClock.now
        lease = try client.grantLease(ttlSeconds: timing.ttlSeconds)
        lastRenewalSent = sent
        self.client = client
        self.timing = timing
        self.onLoss = onLoss
        logger = Logger(component: "lease")
        let thread = Thread { [self] in keepAlive() }
        thread.name = "lease-\(name)"
        thread.start()
    }

    /// The instant after which the holder must not act on the lease (acknowledge, lead).
    public var actingDeadline: ContinuousClock.Instant {
        condition.withLock { lastRenewalSent + timing.actingWindow }
    }

    /// When the last successful renewal was sent (the grant's request, before the first renewal).
    public var lastRenewal: ContinuousClock.Instant { condition.withLock { lastRenewalSent } }

    /// Whether the holder may still act on the lease at `instant`.
    public func mayAct(at instant: ContinuousClock.Instant = .now) -> Bool {
        condition.withLock { lost == nil && !stopped && instant < lastRenewalSent + timing.actingWindow }
    }

    /// Why the lease was lost, or `nil` while it is kept.
    public var loss: CoordinationError? { condition.withLock { lost } }

    /// Stops renewing; with `revoke`, also revokes the lease so that its keys go at once (a
    /// graceful hand-over) rather than when it expires.
    public func stop(revoke: Bool) {
        let wasRunning = condition.withLock {
            defer { stopped = true; condition.broadcast() }
            return !stopped && lost == nil
        }
        guard revoke, wasRunning else { return }
        do { try client.revokeLease(lease.id) } catch {
            logger.warning("could not revoke the lease; its keys go when it expires", ["lease": String(lease.id), "error": error.description])
        }
    }

    private func keepAlive() {
        while true {
            // Sleep until the next renewal is due, or until stopped.
            let shouldRun: Bool = condition.withLock {
                let due = lastRenewalSent + timing.keepAlivePeriod
                while !stopped, ContinuousClock.now < due {
                    condition.wait(until: Date(timeIntervalSinceNow: (due - .now).seconds))
                }
                return !stopped
            }
            guard shouldRun else { return }
            if let failure = renew() {
                let notify = condition.withLock {
                    defer { lost = failure }
                    return !stopped
                }
                logger.warning("lease lost: stop acting on it", ["lease": String(lease.id), "error": failure.description])
                if notify { onLoss(failure) }
                return
            }
        }
    }

    /// Renews the lease, trying again until the acting window closes.
    /// - Returns: why the lease is lost, or `nil` once renewed.
    private func renew() -> CoordinationError? {
        var lastError: CoordinationError?
        while true {
            let sent = ContinuousClock.now
            let deadline = actingDeadline
            guard sent < deadline, !condition.withLock({ stopped }) else {
                return CoordinationError(.leaseNotRenewed, endpoint: lastError?.endpoint ?? "", operation: "keepalive",
                    detail: "no renewal of lease \(lease.id) within \(timing.actingWindow)" + (lastError.map { ": \($0)" } ?? ""))
            }
            do throws(CoordinationError) {
                _ = try client.keepAlive(lease: lease.id, timeout: min(timing.retry, deadline - sent))
                condition.withLock { lastRenewalSent = sent }
                return nil
            } catch where error.kind == .leaseExpired {
                return error
            } catch {
                if lastError == nil { logger.info("lease renewal failed; trying again", ["lease": String(lease.id), "error": error.description]) }
                lastError = error
                // A refused connection fails at once: do not spin on it.
                Thread.sleep(forTimeInterval: min(0.1, (timing.retry / 10).seconds))
            }
        }
    }
}
