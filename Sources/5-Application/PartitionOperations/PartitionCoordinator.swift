import Access
import LearningServices
import LyceumLifecycle
import LyceumLogging
import Majordomo
import Partitions
import LyceumSupport
import Synchronization
import ZeroMQ

/// The broker process's answer to what its partition routing leaves: requests to `books` and
/// `progress` without a top-level `learner` string. It is a ``LocalService`` per partitioned
/// service whose handler only queues the request (the broker's thread never waits), and a
/// thread of its own that calls the partitions through the broker, as any client would, with
/// an ``AsyncClient`` on the broker's endpoint and the process's own key:
/// - `progress` `course_stats` asks every partition for its sums (`course_stats_partial`) and
///   answers their merge (``CourseStatisticsFanOut``), after checking the caller's role itself,
///   since the partitions see the coordinator's key;
/// - any other request goes unchanged to partition 0, which answers the error the
///   unpartitioned service would (`$.learner` missing, an unknown op).
///
/// A partition that does not answer within ``deadline`` (or that the broker reports has no
/// worker) turns the reply into `unavailable` naming the partitions missing.
public final class PartitionCoordinator: Component {
    /// A request handed over by the broker's thread.
    private struct Job: Sendable {
        let service: String
        let body: [[UInt8]]
        let caller: Caller
        let later: DeferredReply
    }

    /// A request in hand: the partitions asked, their replies, and how the replies become one.
    private struct Gathering {
        let service: String
        let later: DeferredReply
        var replies: [Int: [[UInt8]]] = [:]
        var failures: [Int: String] = [:]
        var outstanding: Int
        /// The reply from the partitions' replies, in partition order.
        let combine: @Sendable ([[[UInt8]]]) -> [[UInt8]]
    }

    /// How long the partitions have to answer: the broker's wait for a partition with no worker
    /// plus two seconds, so that the broker's own `service_unknown` names such a partition first.
    let deadline: Duration
    /// The partitions asked.
    public let scheme: PartitionScheme
    private let endpoint: String
    private let security: SocketSecurity
    private let context: Context
    private let wakeup: WakeupPipe
    private let jobs = Mutex<[Job]>([])
    private let stopping = Atomic<Bool>(false)
    private let logger = Logger(component: "coordinator")

    /// A coordinator of `scheme`'s partitions, calling them through the broker at `endpoint`
    /// with `security`; a partition with no worker is given up on after `unknownServiceTimeout`
    /// and two seconds.
    public init(scheme: PartitionScheme, endpoint: String, security: SocketSecurity, unknownServiceTimeout: Duration,
         context: Context) throws(ZMQError) {
        self.scheme = scheme
        self.endpoint = endpoint
        self.security = security
        self.context = context
        deadline = unknownServiceTimeout + .seconds(2)
        wakeup = try WakeupPipe()
    }

    /// The broker's local services: one per partitioned service, answering later.
    public var localServices: [LocalService] {
        PartitionRouting.services.map { service in
            LocalService(name: service) { [self] body, caller, later in
                jobs.withLock { $0.append(Job(service: service, body: body, caller: caller, later: later)) }
                wakeup.signal()
                return nil
            }
        }
    }

    /// Serves the queued requests until ``shutdown()``; requests still in hand then are answered
    /// `unavailable`.
    public func run() throws {
        let client = AsyncClient(
            endpoint: endpoint, capacity: max(256, scheme.count * 8),
            configuration: ClientConfiguration(timeout: deadline, attempts: 1, security: security), context: context, wakeup: wakeup)
        defer { client.close() }
        var waiter = try SocketWaiter(sockets: [], fileDescriptors: [wakeup.fileDescriptor])
        var inHand: [UInt64: Gathering] = [:]
        var asked: [AsyncClient.RequestID: (gathering: UInt64, partition: Int)] = [:]
        var taken: UInt64 = 0
        while !stopping.load(ordering: .relaxed) {
            for job in jobs.withLock({ jobs in defer { jobs = [] }; return jobs }) {
                taken += 1
                guard let gathering = start(job, id: taken, client: client, asked: &asked) else { continue }
                inHand[taken] = gathering
                if gathering.outstanding == 0 { finish(inHand.removeValue(forKey: taken)!) }
            }
            if client.inFlight == 0 {
                // Nothing to receive: wait for the broker's thread to hand over a request.
                try waiter.waitForDescriptors(timeout: .milliseconds(100))
                if waiter.descriptorIsReadable(0) { wakeup.reset() }
                continue
            }
            guard let completion = try client.receive(timeout: .milliseconds(100)),
                  let (id, partition) = asked.removeValue(forKey: completion.id), var gathering = inHand[id] else { continue }
            switch completion.result {
            case .success(let body): gathering.replies[partition] = body
            case .failure(let error): gathering.failures[partition] = Self.reason(error, deadline: deadline)
            }
            gathering.outstanding -= 1
            if gathering.outstanding == 0 {
                inHand[id] = nil
                finish(gathering)
            } else {
                inHand[id] = gathering
            }
        }
        for var gathering in inHand.values {
            for partition in scheme.all where gathering.replies[partition] == nil && gathering.failures[partition] == nil {
                gathering.failures[partition] = "the broker is stopping"
            }
            finish(gathering)
        }
    }

    /// Stops within a tenth of a second.
    public func shutdown() {
        stopping.store(true, ordering: .relaxed)
        wakeup.signal()
    }

    /// Sends what `job` needs, or answers it at once (returning `nil`).
    private func start(
        _ job: Job, id: UInt64, client: AsyncClient, asked: inout [AsyncClient.RequestID: (gathering: UInt64, partition: Int)]
    ) -> Gathering? {
        // Only a one-frame progress request can be course_stats; the others, multi-frame bodies
        // included, get the partition's own answer.
        let plan = job.service == ProgressService.serviceName && job.body.count == 1
            ? CourseStatisticsFanOut.plan(job.body[0], caller: job.caller) : .forward
        let (body, partitions, combine): ([[UInt8]], Range<Int>, @Sendable ([[[UInt8]]]) -> [[UInt8]])
        switch plan {
        case .reply(let reply):
            job.later.send([reply])
            return nil
        case .forward: (body, partitions, combine) = (job.body, 0..<1, { $0[0] })
        case .fanOut(let partial):
            (body, partitions, combine) = ([partial], scheme.all, { [CourseStatisticsFanOut.merge($0.map { $0.first ?? [] })] })
        }
        var gathering = Gathering(service: job.service, later: job.later, outstanding: 0, combine: combine)
        for partition in partitions {
            do throws(MajordomoError) {
                let request = try client.send(PartitionName.service(job.service, partition: partition), body: body)
                asked[request] = (id, partition)
                gathering.outstanding += 1
            } catch {
                gathering.failures[partition] = Self.reason(error, deadline: deadline)
            }
        }
        return gathering
    }

    /// Sends the reply of a request whose partitions have all answered or failed.
    private func finish(_ gathering: Gathering) {
        guard gathering.failures.isEmpty else {
            let missing = gathering.failures.keys.sorted()
            logger.warning("partitions did not answer", ["service": gathering.service, "partitions": missing.map(String.init).joined(separator: ",")])
            gathering.later.send([CourseStatisticsFanOut.unavailable(
                service: gathering.service, missing: missing, reason: gathering.failures[missing[0]] ?? "")])
            return
        }
        gathering.later.send(gathering.combine(gathering.replies.keys.sorted().compactMap { gathering.replies[$0] }))
    }

    /// Why a partition gave no answer, for the `unavailable` message.
    private static func reason(_ error: MajordomoError, deadline: Duration) -> String {
        if error.code == .timedOut { return "no reply within \(deadline.milliseconds) ms" }
        return error.code == .serviceUnknown ? error.detail : error.description
    }
}
