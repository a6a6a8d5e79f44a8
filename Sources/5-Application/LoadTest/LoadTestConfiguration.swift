import ZeroMQ

/// Everything that defines a run; two runs with equal configurations send the same requests.
public struct LoadTestConfiguration: Sendable {
    /// How requests are paced.
    public enum Load: Sendable, Equatable {
        /// Closed loop: `inFlight` requests outstanding at all times, a new one sent as each
        /// reply arrives; latency is measured from the actual send.
        case closed(inFlight: Int)
        /// Open loop: `rate` requests per second on a fixed schedule whatever the server does;
        /// latency is measured from each request's intended send time, so a stall shows in
        /// full (no coordinated omission). At most `maxInFlight` are outstanding.
        case open(rate: Double, maxInFlight: Int)
    }

    /// When the measured part of the run ends.
    public enum Stop: Sendable, Equatable {
        /// After this long past the warm-up.
        case after(Duration)
        /// After this many requests past the warm-up have been sent.
        case requests(Int)
    }

    /// The brokers, e.g. `tcp://127.0.0.1:5555`: connection `i` starts at broker `i` modulo
    /// their count and, when one fails it, moves on to the next (``LoadTestRunner``).
    public var endpoints: [String]
    /// The scenarios and their weights.
    public var mix: ScenarioMix
    /// Client connections (DEALER sockets), each on a thread of its own.
    public var connections: Int
    /// Pacing.
    public var load: Load
    /// End of the measured part.
    public var stop: Stop
    /// Requests sent during this first stretch are not measured.
    public var warmUp: Duration
    /// Learners, books and requests are generated from it.
    public var seed: UInt64
    /// Synthetic learners.
    public var learnerCount: Int
    /// Books created before the run for reads and updates.
    public var bookCount: Int
    /// What `book-list` requests ask for.
    public var listing: BookListing
    /// Whether every reply is checked for correctness rather than only for `ok`.
    public var verify: Bool
    /// How long a request may go unanswered before it counts as `timed_out`.
    public var timeout: Duration
    /// How every client connection authenticates to the broker: a CURVE client when the run
    /// is given keys. Default: plaintext.
    public var security: SocketSecurity = .plaintext
    /// Server processes whose CPU time over the measured part is reported, per process and per
    /// measured request (``LoadTestResult/serverCPU``); none by default.
    public var serverProcesses: [Int32]

    /// A configuration; every argument has the default the command line documents.
    public init(
        endpoints: [String] = ["tcp://127.0.0.1:5555"], mix: ScenarioMix = .realistic, connections: Int = 4,
        load: Load = .closed(inFlight: 50), stop: Stop = .after(.seconds(10)), warmUp: Duration = .seconds(2),
        seed: UInt64 = 1, learnerCount: Int = 100, bookCount: Int = 1000, verify: Bool = false,
        timeout: Duration = .seconds(5), serverProcesses: [Int32] = [], listing: BookListing = BookListing()
    ) {
        self.endpoints = endpoints
        self.mix = mix
        self.connections = connections
        self.load = load
        self.stop = stop
        self.warmUp = warmUp
        self.seed = seed
        self.learnerCount = learnerCount
        self.bookCount = bookCount
        self.verify = verify
        self.timeout = timeout
        self.serverProcesses = serverProcesses
        self.listing = listing
    }

    /// Refuses values that cannot make a meaningful run.
    /// - Throws: ``LoadTestError/Code/invalidOption`` naming the option.
    public func validate() throws(LoadTestError) {
        func refuse(_ option: String, _ detail: String) -> LoadTestError {
            LoadTestError(code: .invalidOption, option: option, detail: detail)
        }
        guard !endpoints.isEmpty else { throw refuse("--broker", "needs at least one broker") }
        guard (1...1024).contains(connections) else { throw refuse("--connections", "must be from 1 to 1024") }
        switch load {
        case .closed(let inFlight):
            guard (1...100_000).contains(inFlight) else { throw refuse("--in-flight", "must be from 1 to 100000") }
            guard inFlight >= connections else { throw refuse("--in-flight", "must be at least --connections (\(connections))") }
        case .open(let rate, let maxInFlight):
            guard rate.isFinite, rate > 0, rate <= 10_000_000 else { throw refuse("--rate", "must be more than 0 and at most 10000000 requests/s") }
            guard (1...100_000).contains(maxInFlight), maxInFlight >= connections else {
                throw refuse("--in-flight", "must be from --connections (\(connections)) to 100000")
            }
        }
        switch stop {
        case .after(let duration): guard duration > .zero, duration <= .seconds(86_400) else { throw refuse("--duration", "must be more than 0 and at most 24 h") }
        case .requests(let count): guard count > 0 else { throw refuse("--requests", "must be at least 1") }
        }
        guard warmUp >= .zero, warmUp <= .seconds(3600) else { throw refuse("--warmup", "must be from 0 to 1 h") }
        guard (1...1_000_000).contains(learnerCount) else { throw refuse("--learners", "must be from 1 to 1000000") }
        guard (1...10_000_000).contains(bookCount) else { throw refuse("--books", "must be from 1 to 10000000") }
        guard timeout >= .milliseconds(10) else { throw refuse("--timeout", "must be at least 10 ms") }
        guard serverProcesses.allSatisfy({ $0 > 0 }) else { throw refuse("--server-pid", "must be a process id, more than 0") }
        try listing.validate()
    }

    /// The share of `total` that connection `index` of `connections` takes.
    static func share(of total: Int, connection index: Int, of connections: Int) -> Int {
        total / connections + (index < total % connections ? 1 : 0)
    }
}
