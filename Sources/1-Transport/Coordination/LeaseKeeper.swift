import Foundation
import LyceumLogging
import LyceumSupport

/// A lease granted by etcd and kept alive by a thread of its own, with the holder's side of the
/// lease's safety rule: ``mayAct(at:)`` is true only within ``LeaseTiming/actingWindow`` of the
/// sending of the last successful renewal, so it turns false before etcd can expire the lease.
/// Once lost (etcd says it expired, or no renewal succeeded within the window) a keeper stays
/// lost: its holder takes a new lease.
public final class LeaseKeeper: Sendable {
    /// The lease etcd granted.
    public let lease: Lease
    /// The timings it is kept by.
    public let timing: LeaseTiming
    private let client: EtcdClient
    private let logger: Logger
    private let onLoss: @Sendable (CoordinationError) -> Void
    /// What the keep-alive thread and the holder share; the thread waits on it between renewals.
    private struct State {
        /// When the last successful renewal was sent.
        var lastRenewalSent: ContinuousClock.Instant
        /// Why the lease was lost, once it is.
        var lost: CoordinationError?
        /// Whether `stop` was called.
        var stopped = false
    }

    private let state: Monitor<State>

    /// Grants a lease with `timing` and starts renewing it.
    /// - Parameter onLoss: called once, on the keeper's thread, when the lease is lost.
    public init(client: EtcdClient, timing: LeaseTiming, name: String, onLoss: @escaping @Sendable (CoordinationError) -> Void = { _ in }) throws(CoordinationError) {
        let sent = ContinuousClock.now
        lease = try client.grantLease(ttlSeconds: timing.ttlSeconds)
        state = Monitor(State(lastRenewalSent: sent))
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
        state.withLock { $0.lastRenewalSent } + timing.actingWindow
    }

    /// When the last successful renewal was sent (the grant's request, before the first renewal).
    public var lastRenewal: ContinuousClock.Instant { state.withLock { $0.lastRenewalSent } }

    /// Whether the holder may still act on the lease at `instant`.
    public func mayAct(at instant: ContinuousClock.Instant = .now) -> Bool {
        state.withLock { $0.lost == nil && !$0.stopped && instant < $0.lastRenewalSent + timing.actingWindow }
    }

    /// Why the lease was lost, or `nil` while it is kept.
    public var loss: CoordinationError? { state.withLock { $0.lost } }

    /// Stops renewing; with `revoke`, also revokes the lease so that its keys go at once (a
    /// graceful hand-over) rather than when it expires.
    public func stop(revoke: Bool) {
        let wasRunning = state.update { state in
            defer { state.stopped = true }
            return !state.stopped && state.lost == nil
        }
        guard revoke, wasRunning else { return }
        do { try client.revokeLease(lease.id) } catch {
            logger.warning("could not revoke the lease; its keys go when it expires", ["lease": String(lease.id), "error": error.description])
        }
    }

    private func keepAlive() {
        while true {
            // Sleep until the next renewal is due, or until stopped (only this thread renews).
            let due = state.withLock { $0.lastRenewalSent } + timing.keepAlivePeriod
            if state.wait(until: \.stopped, deadline: due) { return }
            if let failure = renew() {
                let notify = state.withLock { state in
                    defer { state.lost = failure }
                    return !state.stopped
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
            guard sent < deadline, !state.withLock({ $0.stopped }) else {
                return CoordinationError(.leaseNotRenewed, endpoint: lastError?.endpoint ?? "", operation: "keepalive",
                    detail: "no renewal of lease \(lease.id) within \(timing.actingWindow)" + (lastError.map { ": \($0)" } ?? ""))
            }
            do throws(CoordinationError) {
                _ = try client.keepAlive(lease: lease.id, timeout: min(timing.retry, deadline - sent))
                state.withLock { $0.lastRenewalSent = sent }
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
