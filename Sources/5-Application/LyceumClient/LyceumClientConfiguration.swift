import ZeroMQ

/// Where a ``LyceumClient`` connects and how patiently it retries.
public struct LyceumClientConfiguration: Sendable {
    /// Broker endpoints (`tcp://host:port`), tried in order: the client starts on the first and,
    /// whenever a request times out, finds no broker or finds the service unknown, moves to the
    /// next one, round-robin.
    public var brokers: [String]
    /// How long one attempt waits for its reply. Default: 2500 ms.
    public var timeout: Duration
    /// Attempts per request, the first included, across brokers. Default: 3.
    public var attempts: Int
    /// The wait before the second attempt; each later one waits twice the one before. Default: 100 ms.
    public var initialBackoff: Duration
    /// The longest wait between attempts. Default: 2 s.
    public var maxBackoff: Duration
    /// Requests in flight at once on the connection; more wait in the client, in order. Default: 256.
    public var maxInFlight: Int
    /// CURVE keys for brokers that require CURVE; `nil` (the default) connects in plain text.
    public var curve: CurveClientKeys?
    /// Where events are published and snapshots served, for ``LyceumClient/progressEvents(course:)``;
    /// `nil` when the application does not subscribe.
    public var events: EventEndpoints?

    /// The endpoints a subscriber connects to (`lyceum serve --events-endpoint … --snapshot-endpoint …`).
    public struct EventEndpoints: Sendable {
        /// The PUB/XPUB endpoint events arrive from.
        public var events: String
        /// The ROUTER endpoint that answers snapshot requests.
        public var snapshot: String

        /// Endpoints for a subscriber.
        public init(events: String, snapshot: String) {
            self.events = events
            self.snapshot = snapshot
        }
    }

    /// A configuration for `brokers`; each other argument defaults to the value its property documents.
    public init(
        brokers: [String], timeout: Duration = .milliseconds(2500), attempts: Int = 3,
        initialBackoff: Duration = .milliseconds(100), maxBackoff: Duration = .seconds(2), maxInFlight: Int = 256,
        curve: CurveClientKeys? = nil, events: EventEndpoints? = nil
    ) {
        self.brokers = brokers
        self.timeout = timeout
        self.attempts = max(1, attempts)
        self.initialBackoff = initialBackoff
        self.maxBackoff = maxBackoff
        self.maxInFlight = max(1, maxInFlight)
        self.curve = curve
        self.events = events
    }

    /// The wait before attempt `attempt` (2 or later): exponential from ``initialBackoff``, at most ``maxBackoff``.
    func backoff(beforeAttempt attempt: Int) -> Duration {
        let doublings = min(max(0, attempt - 2), 30)
        return min(maxBackoff, initialBackoff * (1 << doublings))
    }
}
