/// What a run, or one connection of it, has measured so far.
public struct RunStatistics: Sendable {
    /// Latency of every measured request, successful or not, from its intended (open loop)
    /// or actual (closed loop) send time to its reply.
    public var latency = LatencyHistogram()
    /// How late requests left compared with their schedule (open loop only): the client's own lag.
    public var sendLag = LatencyHistogram()
    /// Replies to measured requests, whatever they said.
    public var completed = 0
    /// Measured requests that failed, by error code: protocol codes (`not_found`), transport
    /// codes (`timed_out`) and `wrong_reply` for replies `--verify` rejected.
    public var errors: [String: Int] = [:]
    /// The first few reasons `--verify` gave, for a person to read.
    public var wrongReplies: [String] = []
    /// Replies of every kind, warm-up included: the live progress counts these.
    public var repliesIncludingWarmUp = 0
    /// Requests sent, warm-up included.
    public var sent = 0
    /// When the last measured reply came.
    public var lastMeasuredReply: ContinuousClock.Instant?
    /// Times a connection moved to another broker, warm-up included.
    public var failovers = 0

    static let wrongReplyCode = "wrong_reply"
    private static let wrongRepliesKept = 5

    /// The measured requests that failed.
    public var errorCount: Int { errors.values.reduce(0, +) }

    mutating func count(_ outcome: ReplyOutcome, latency: Duration?) {
        repliesIncludingWarmUp += 1
        guard let latency else { return }
        self.latency.record(latency)
        completed += 1
        switch outcome {
        case .success: break
        case .error(let code): errors[code, default: 0] += 1
        case .wrong(let detail):
            errors[Self.wrongReplyCode, default: 0] += 1
            if wrongReplies.count < Self.wrongRepliesKept { wrongReplies.append(detail) }
        }
    }

    /// Adds another connection's figures.
    public mutating func merge(_ other: RunStatistics) {
        latency.merge(other.latency)
        sendLag.merge(other.sendLag)
        completed += other.completed
        errors.merge(other.errors, uniquingKeysWith: +)
        wrongReplies += other.wrongReplies.prefix(Self.wrongRepliesKept - min(wrongReplies.count, Self.wrongRepliesKept))
        repliesIncludingWarmUp += other.repliesIncludingWarmUp
        sent += other.sent
        failovers += other.failovers
        if let theirs = other.lastMeasuredReply { lastMeasuredReply = max(lastMeasuredReply ?? theirs, theirs) }
    }
}
