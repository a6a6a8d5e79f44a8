import Backup
import Configuration
import Coordination
import Dashboard
import DurableFiles
import EventSubscription
import EventPublishing
import Foundation
import HTTPServer
import LearningServices
import LyceumLifecycle
import LyceumLogging
import Majordomo
import PartitionOperations
import Partitions
import Security
import ServiceHosting
import Telemetry
import ZeroMQ

/// The long-running subcommands: `serve`, `broker` and `worker`. Each returns the process's exit
/// status after an orderly stop, having released its ZeroMQ context (which delivers the last
/// replies and DISCONNECTs) and closed its journals. A host serving progress or books publishes
/// the events of durable writes: `serve` on `settings.eventsEndpoint`, a `worker` into the
/// forwarders that `broker`s host at `settings.forwarderEndpoints` and republish on
/// `settings.eventsEndpoint` (neither when that is `none`). Each answers `mmi.status` when it
/// runs a broker, serves `GET /metrics` when `settings.metricsPort` is set, and on SIGHUP reads
/// its configuration sources again for the log level and reloads the catalog and the
/// authorised keys. With CURVE (`security`) every socket it binds is a CURVE server checked by
/// the process's ZAP handler, which runs first, and every socket it connects a CURVE client.
public enum ServerProcesses {
    /// `lyceum serve`: a broker that answers every service itself (as `LocalService`s: no worker
    /// hop inside one process), with writes replying once durable without holding its thread.
    public static func serve(_ settings: Settings, security: ProcessSecurity = .plaintext, reloading sources: ConfigurationSources? = nil) -> Int32 {
        let logger = starting("serve", settings)
        let host: ServiceHost
        switch openHost(serving: ServiceRegistry.standard.names, settings, logger: logger) {
        case .success(let opened): host = opened
        case .failure(let refusal): return refusal.status
        }
        defer { host.close() }
        do {
            let revocations = Revocations()
            let readiness = Readiness(awaiting: [Readiness.started])
            return try runGroup(logger: logger, readiness: readiness,
                                reload: reloader(sources, host: host, security: security, revocations: revocations)) { context in
                try serveComponents(host, settings: settings, security: security, revocations: revocations, readiness: readiness, context: context)
            }
        } catch {
            logger.critical("cannot start", ["error": "\(error)"])
            return 1
        }
    }

    /// What `serve` runs for `host`, in the order a `ComponentGroup` takes them: the ZAP handler
    /// (with CURVE), the metrics endpoint (with `settings.metricsPort`; its `/readyz` answers
    /// with `readiness`, its `/healthz` with `watchdog`, which the broker's loop pets), the event publisher
    /// (when events are published and a service of `host` has events), the host's own threads
    /// (`ServiceHost.components`: the catalog's searches), then a broker answering every service
    /// of `host` itself. The publisher is listed before the broker, so it stops after the broker
    /// has sent its last replies, and publishes their events; the search thread, asked to stop
    /// with the broker, answers the searches still waiting `unavailable` at once, which the
    /// broker sends among its last replies; the ZAP handler first, so that no CURVE server
    /// socket is ever bound without it.
    public static func serveComponents(
        _ host: ServiceHost, settings: Settings, security: ProcessSecurity = .plaintext, revocations: Revocations = Revocations(),
        readiness: Readiness? = nil, watchdog: Watchdog = .forProcess(), context: Context
    ) throws -> [(name: String, component: any Component)] {
        let report = ProcessReport(role: "serve", journals: host.journals)
        // The dashboard's bridge subscribes and asks for snapshots in-process, beside the network endpoints.
        let dashboard = settings.dashboardPort != 0
        var eventConfiguration = EventPublisherConfiguration(
            publishEndpoints: [settings.eventsEndpoint] + (dashboard ? [DashboardComponents.eventsEndpoint] : []),
            snapshotEndpoints: [settings.snapshotEndpoint] + (dashboard ? [DashboardComponents.snapshotEndpoint] : []),
            snapshotPageBytes: settings.snapshotPageBytes)
        eventConfiguration.publisherSecurity = security.bound(.events)
        let publisher = settings.publishesEvents
            ? try eventPublisher(for: host, configuration: eventConfiguration, security: security, revocations: revocations, context: context) : nil
        var configuration = brokerConfiguration(settings, report: report, security: security, watchdog: watchdog)
        let backups = try BackupSource(
            services: { host.services }, dataDirectory: settings.dataDirectory, partitions: 0, lyceumVersion: VersionCommand.lyceumVersion,
            idleLimit: settings.backupIdleLimit)
        let handler = ServiceHost.handlers(publishingTo: publisher)
        configuration.localServices = host.services.map { LocalService(name: $0.name, handler: handler($0)) } + [backups.localService]
        let broker = try Broker(endpoints: settings.endpoints, configuration: configuration, context: context)
        let catalog = host.catalog
        return try security.zapHandler(context: context) + metricsEndpoint(settings, report: report, readiness: readiness, watchdog: watchdog)
            + dashboardComponents(settings, context: context, snapshotEndpoint: DashboardComponents.snapshotEndpoint, security: .plaintext) { _ in
                catalog.catalog.courses.map { course in
                    CourseTitle(id: course.id, title: course.title,
                                lessons: Dictionary(course.lessons.map { ($0.id, $0.title) }, uniquingKeysWith: { first, _ in first }))
                }
            }
            + published(publisher) + host.components + [("broker", broker)]
    }

    /// `lyceum broker`: the broker, bound to `settings.endpoints`, and the event forwarder that
    /// workers publish into at `settings.forwarderEndpoints` and dashboards subscribe to at
    /// `settings.eventsEndpoint`.
    public static func broker(_ settings: Settings, security: ProcessSecurity = .plaintext, reloading sources: ConfigurationSources? = nil) -> Int32 {
        let logger = starting("broker", settings)
        let report = ProcessReport(role: "broker", journals: [:])
        do {
            let revocations = Revocations()
            let readiness = Readiness(awaiting: [Readiness.started])
            let watchdog = Watchdog.forProcess()
            return try runGroup(logger: logger, readiness: readiness,
                                reload: reloader(sources, host: nil, security: security, revocations: revocations)) { context in
                var configuration = brokerConfiguration(settings, report: report, security: security, watchdog: watchdog)
                let coordinator = try partitionCoordinator(settings, security: security, context: context)
                if let coordinator {
                    configuration.routedServices = PartitionRouting.routedServices(coordinator.scheme)
                    configuration.localServices = coordinator.localServices
                }
                let broker = try Broker(endpoints: settings.endpoints, configuration: configuration, context: context)
                let coordinating: [(name: String, component: any Component)] = coordinator.map { [("coordinator", $0)] } ?? []
                let dashboard = settings.dashboardPort != 0
                var forwarder: [(name: String, component: any Component)] = []
                if settings.publishesEvents {
                    let events = try EventForwarder(
                        publisherEndpoints: settings.forwarderEndpoints,
                        subscriberEndpoints: [settings.eventsEndpoint] + (dashboard ? [DashboardComponents.eventsEndpoint] : []),
                        publisherSecurity: security.bound(.forwarder), subscriberSecurity: security.bound(.events), context: context)
                    revocations.onRevocation { revoked in
                        if revoked.contains(.subscribeEvents) { events.rebindSubscribers() }
                        if revoked.contains(.publishEvents) { events.rebindPublishers() }
                    }
                    forwarder = [("events", events)]
                }
                // Snapshots live in the worker that publishes progress: the bridge asks the
                // endpoint its heartbeats advertise, with this process's keys (the worker's
                // authorized-keys must hold them). Titles come from the catalog service, through
                // this broker, which knows its own key as an app.
                let titles = CatalogTitleCache(broker: settings.endpoints[0], security: security.connectingToItself, context: context)
                return try security.zapHandler(context: context) + metricsEndpoint(settings, report: report, readiness: readiness, watchdog: watchdog)
                    + dashboardComponents(settings, context: context, snapshotEndpoint: nil, security: security.connectingToItself) { titles.titles(seen: $0) }
                    + forwarder + coordinating + [("broker", broker)]
            }
        } catch {
            logger.critical("cannot start", ["error": "\(error)"])
            return 1
        }
    }

    /// `lyceum worker`: one `WorkerPool` with `settings.sessionsPerService` sessions for each of
    /// `settings.services` (every standard service when none is given) at each broker of `settings.brokers`; a worker serving progress or
    /// books publishes its events into every forwarder of `settings.forwarderEndpoints`; a worker
    /// serving the catalog ranks its searches on the host's search thread, listed before the
    /// pool, which stops with it as `serve`'s broker does.
    public static func worker(_ settings: Settings, security: ProcessSecurity = .plaintext, reloading sources: ConfigurationSources? = nil) -> Int32 {
        let logger = starting("worker", settings)
        let host: ServiceHost
        switch openHost(serving: settings.services.isEmpty ? ServiceRegistry.standard.names : settings.services, settings, logger: logger) {
        case .success(let opened): host = opened
        case .failure(let refusal): return refusal.status
        }
        defer { host.close() }
        var budget: WorkerSessionBudget?
        if settings.partitionScheme != nil {
            // Many partitions' sessions need many descriptors: take what the hard limit allows.
            let sessions = WorkerSessionBudget.of(
                brokers: settings.brokers.count, sessions: settings.sessionsPerService, descriptorLimit: DescriptorLimit.raise(logger: logger))
            // Its instances and the node service's.
            if let refusal = sessions.refusal(instances: host.services.count + 1) {
                logger.critical("cannot start", ["error": refusal])
                return 2
            }
            budget = sessions
            for descriptor in host.descriptors where descriptor.isJournaled && !host.services.contains(where: { $0.service.name == descriptor.name }) {
                logger.info("holding no partition; waiting for partitions", ["service": descriptor.name, "node": settings.node])
            }
        }
        // Every learner's progress must never sit on a plaintext port of a CURVE deployment,
        // nor will after a partition of it moves in.
        if security.isCurve && security.keyRing == nil && host.descriptors.contains(where: \.servesSnapshots) {
            logger.critical("cannot start", ["error": "authorized-keys: required with curve-secret-key when the worker serves progress: "
                                             + "its snapshot endpoint admits only the dashboard keys listed there"])
            return 2
        }
        do {
            let revocations = Revocations()
            // A replicating worker is ready once caught up on every replica it holds (a rolling
            // restart and Kubernetes' probes wait for that).
            let replicating = settings.replicas > 1 && budget != nil
            let readiness = Readiness(awaiting: [Readiness.started, Readiness.registered] + (replicating ? [Readiness.caughtUp] : []))
            let watchdog = Watchdog.forProcess()
            return try runGroup(logger: logger, readiness: readiness,
                                reload: reloader(sources, host: host, security: security, revocations: revocations)) { context in
                // Snapshots are answered on loopback, on a port of the kernel's choosing, unless
                // `snapshot-endpoint` names an address (for dashboards on other hosts): heartbeats
                // through the forwarder advertise it (with its CURVE key), and several workers on
                // one host cannot share one port. With CURVE it is a CURVE server behind the
                // process's ZAP handler and authorised keys; a CURVE worker without them (books
                // only) binds none.
                let snapshots = security.isCurve && security.keyRing == nil ? [] : [chosenSnapshotEndpoint(settings) ?? "tcp://127.0.0.1:*"]
                var eventConfiguration = EventPublisherConfiguration(
                    forwarderEndpoints: settings.forwarderEndpoints, snapshotEndpoints: snapshots,
                    snapshotPageBytes: settings.snapshotPageBytes)
                eventConfiguration.publisherSecurity = security.connecting
                let publisher = try eventPublisher(
                    for: host, configuration: eventConfiguration, security: security, revocations: revocations, context: context)
                var configuration = WorkerConfiguration(
                    heartbeat: Heartbeat(interval: settings.heartbeatInterval, liveness: settings.heartbeatLiveness),
                    reconnectInitialDelay: settings.reconnectInitial,
                    reconnectMaximumDelay: settings.reconnectMaximum)
                configuration.security = security.connecting
                configuration.dialect = settings.mdp == 18 ? .majortomo : .mdp7
                configuration.watchdog = watchdog
                configuration.registrationChanged = { registered in
                    registered ? readiness.meet(Readiness.registered) : readiness.withdraw(Readiness.registered)
                }
                // Over CURVE the broker's server key vouches for the identity frame (protocol/majordomo.md).
                configuration.trustsCallerIdentities = security.isCurve
                // One pool, one thread, for every service registered with every broker: the
                // unpartitioned ones, and in a partitioned worker each partition held and the node
                // service; a partition moving in or out is added to it or removed from it alone.
                let handler = ServiceHost.handlers(publishingTo: publisher)
                var services = host.services.filter { $0.partition == nil }.map { ($0.name, handler($0)) }
                var worker: PartitionedWorker?
                let plan = budget == nil ? nil : try replicationPlan(settings, security: security, context: context)
                if let budget {
                    let partitions = PartitionedWorker(
                        node: settings.node, host: host, dataDirectory: settings.dataDirectory, budget: budget, handler: handler,
                        changed: { hosted, served in publisher.map { host.snapshotsFollow(hosted, served: served, publisher: $0) } },
                        replication: plan)
                    let caller = try NodeCaller(endpoints: settings.brokers, security: security.connecting)
                    let moves = PartitionMoveOps(worker: partitions, call: caller.call, outcomes: PartitionMoveOutcomeFile(dataDirectory: settings.dataDirectory))
                    let node = NodeService.worker(node: settings.node, partitions: settings.partitions, worker: partitions)
                    let backups = try BackupSource(
                        services: { partitions.served }, dataDirectory: settings.dataDirectory, partitions: settings.partitions,
                        lyceumVersion: VersionCommand.lyceumVersion, idleLimit: settings.backupIdleLimit)
                    services += partitions.poolServices + [(node.name, backups.handler(otherwise: moves.handler(otherwise: FrameHandler.handler(node.answer))))]
                    worker = partitions
                }
                let pool = try WorkerPool(
                    endpoints: settings.brokers, services: services,
                    sessions: settings.sessionsPerService, configuration: configuration, context: context)
                worker?.serve(on: pool)
                try worker?.startReplicas()
                if let worker, settings.replicas > 1 {
                    // A failed sync ends this node's leaderships before the stop: the writes that
                    // wait for a majority are answered `unavailable` at once, instead of holding
                    // the pool's stop past its grace period. On a thread of its own: the sync
                    // that failed may have been the pool's, in the middle of its batch.
                    StorageFailure.onStop { _ in
                        Thread.detachNewThread {
                            worker.stopReplicas(resign: true)
                            kill(getpid(), SIGTERM)
                        }
                    }
                }
                // The replicas' gauges are set from their status when scraped.
                let report = ProcessReport(role: "worker", journals: host.journals) { [worker] in worker?.refreshReplicaMetrics() }
                // Replicating, the pool hands the node's leaderships over before it stops; the
                // replicas, before the pool, stop once it has, resigning what is left.
                var workers: any Component = pool
                var handOver: [(name: String, component: any Component)] = []
                if replicating, let worker {
                    let handOff = plan.map { LeadershipHandOff(pool: pool, worker: worker, etcd: $0.etcd, leaseSeconds: $0.timing.ttlSeconds) }
                    let formats = plan.flatMap { publishedFormats(node: settings.node, plan: $0, logger: logger) }
                    workers = handOff ?? pool
                    handOver = [("replicas", ReplicaHandOver(worker: worker) {
                        handOff?.unmark()
                        formats?.stop(revoke: true)
                    })]
                    // `/readyz` waits until every replica held is caught up (docs/kubernetes.md's probes).
                    handOver.append(("replica-readiness", ReplicaReadiness(worker: worker, readiness: readiness)))
                }
                return try security.zapHandler(context: context) + metricsEndpoint(settings, report: report, readiness: readiness, watchdog: watchdog)
                    + handOver + published(publisher) + host.components + [("workers", workers)]
            }
        } catch {
            logger.critical("cannot start", ["error": "\(error)"])
            return 1
        }
    }

    /// How a worker replicates its partitions (`replicas` > 1): etcd's members, the lease
    /// timings, and the one ROUTER on `replication-endpoint` where it leads every partition it
    /// leads; `nil` with 1 replica. With CURVE the links are CURVE with the worker's own keys,
    /// and the keys of role `worker` in its `authorized-keys` are the replicas it admits and the
    /// leaders it follows.
    static func replicationPlan(_ settings: Settings, security: ProcessSecurity, context: Context) throws -> ReplicationPlan? {
        guard settings.replicas > 1, let endpoint = settings.replicationEndpoint else { return nil }
        return ReplicationPlan(
            replicas: settings.replicas, etcd: try EtcdClient(endpoints: settings.etcdEndpoints), timing: try settings.leaseTiming,
            endpoint: endpoint, context: context, security: security.replication, balanceInterval: settings.leaderBalanceInterval)
    }

    /// This node's formats entry in etcd (``NodeFormats``), kept while the process runs; `nil`,
    /// logged, when etcd does not take it: peers then speak the oldest format to this node.
    private static func publishedFormats(node: String, plan: ReplicationPlan, logger: Logger) -> LeaseKeeper? {
        do { return try NodeFormats.publish(node: node, etcd: plan.etcd, timing: plan.timing) } catch {
            logger.warning("cannot publish this node's formats; peers speak the oldest to it", ["node": node, "error": error.description])
            return nil
        }
    }

    /// The snapshot endpoint a worker was given (`snapshot-endpoint` from any source); `nil`
    /// when it takes the default, a loopback port of the kernel's choosing. `serve`'s default
    /// (`:5557`) is not a worker's: several workers on one host could not share it.
    static func chosenSnapshotEndpoint(_ settings: Settings) -> String? {
        settings.origins[.snapshotEndpoint] == nil ? nil : settings.snapshotEndpoint
    }

    /// Applies the log level, format and rate limit of `settings` to every logger in the process.
    public static func configureLogging(_ settings: Settings) {
        Logger.configure(level: settings.logLevel, format: settings.logFormat ?? Logger.defaultFormat)
        Logger.configure(linesPerSecond: settings.logRateLimit)
    }

    /// The broker's timings, bounds, `mmi.status` answer, watchdog (`/healthz`'s, and systemd's when it asked) and security, from `settings` and
    /// `security` (a CURVE server whose callers are looked up in the authorised keys, or
    /// plaintext with every caller unverified); raises the process's descriptor limit and fits
    /// `max-connections` under it.
    static func brokerConfiguration(_ settings: Settings, report: ProcessReport, security: ProcessSecurity, watchdog: Watchdog) -> BrokerConfiguration {
        let logger = Logger(component: "broker")
        let descriptors = DescriptorLimit.raise(logger: logger)
        var configuration = BrokerConfiguration(
            heartbeat: Heartbeat(interval: settings.heartbeatInterval, liveness: settings.heartbeatLiveness),
            unknownServiceTimeout: settings.unknownServiceTimeout,
            maxQueuedRequestsPerService: settings.queueLimit,
            maxQueuedRequests: settings.queueLimitTotal,
            highWaterMark: Int32(settings.highWaterMark),
            receiveHighWaterMark: Int32(settings.receiveHighWaterMark),
            maxBatchDuration: settings.maxBatch,
            maxConnections: DescriptorLimit.connectionCap(settings.maxConnections, limit: descriptors, logger: logger),
            maxInputBytesPerConnection: UInt64(settings.maxInputBytes),
            maxOutputBytesPerConnection: UInt64(settings.maxOutputBytes),
            managementServices: [ProcessReport.statusService: { snapshot, _ in report.statusJSON(broker: snapshot) }],
            security: security.bound(.broker),
            keyDirectory: security.directory,
            servicePermissions: .lyceum
        )
        configuration.watchdog = watchdog
        return configuration
    }

    /// The coordinator of a partitioned cluster's broker (`settings.partitions` > 0), calling
    /// the partitions through the broker's first endpoint with the process's own key; `nil`
    /// unpartitioned. Listed before the broker, it stops after it, so that the broker's last
    /// deferred replies are still sent.
    private static func partitionCoordinator(_ settings: Settings, security: ProcessSecurity, context: Context) throws -> PartitionCoordinator? {
        guard let scheme = settings.partitionScheme else { return nil }
        return try PartitionCoordinator(
            scheme: scheme, endpoint: settings.endpoints[0], security: security.connectingToItself,
            unknownServiceTimeout: settings.unknownServiceTimeout, context: context)
    }

    /// The publisher of `host`'s events (`ServiceHost.eventPublisher`), when it has any: its
    /// snapshot endpoints are CURVE servers with `security`, and it binds its subscribers' endpoints
    /// again when a key that may subscribe is revoked.
    private static func eventPublisher(
        for host: ServiceHost, configuration: EventPublisherConfiguration, security: ProcessSecurity, revocations: Revocations, context: Context
    ) throws(EventsError) -> EventPublisher? {
        var configuration = configuration
        configuration.snapshotSecurity = security.bound(.snapshots)
        guard let publisher = try host.eventPublisher(configuration: configuration, context: context) else { return nil }
        revocations.onRevocation { if $0.contains(.subscribeEvents) { publisher.rebindSubscribers() } }
        return publisher
    }

    /// The publisher as the group's `events` service, when there is one.
    private static func published(_ publisher: EventPublisher?) -> [(name: String, component: any Component)] {
        publisher.map { [("events", $0)] } ?? []
    }

    /// Applies `settings`' logging and installs the process's metrics backend before anything
    /// else starts: the first steps of every long-running command. Returns the command's logger.
    private static func starting(_ component: String, _ settings: Settings) -> Logger {
        configureLogging(settings)
        _ = ProcessMetrics.backend
        return Logger(component: component)
    }

    /// Why a host could not open, as the exit status: 2 for a partition directory it cannot
    /// serve (a deployment mistake, like a bad setting), 1 for anything else.
    private struct HostRefusal: Error {
        let status: Int32
    }

    /// The host of the services `names`, or, logged, why it cannot start.
    private static func openHost(serving names: [String], _ settings: Settings, logger: Logger) -> Result<ServiceHost, HostRefusal> {
        do {
            return .success(try ServiceHost(serving: names, settings: settings.hosting))
        } catch let error as PartitionLayoutError {
            logger.critical("cannot start", ["error": error.description])
            return .failure(HostRefusal(status: 2))
        } catch {
            logger.critical("cannot start", ["error": "\(error)"])
            return .failure(HostRefusal(status: 1))
        }
    }

    /// The metrics port when `settings.metricsPort` is set, on `settings.metricsAddress`:
    /// `GET /metrics` (with the metrics token when one is set), `/readyz` answered by
    /// `readiness` (what systemd's `READY=1` follows too) and `/healthz` by `watchdog`; bound
    /// now, so that a taken port stops the start.
    private static func metricsEndpoint(
        _ settings: Settings, report: ProcessReport, readiness: Readiness?, watchdog: Watchdog
    ) throws(HTTPEndpointError) -> [(name: String, component: any Component)] {
        guard settings.metricsPort != 0 else { return [] }
        let limits = HTTPLoop.Limits(maxConnections: settings.metricsConnections, requestTimeout: settings.metricsTimeout)
        let endpoint = try HTTPEndpoint(
            name: "metrics", setting: SettingKey.metricsPort.rawValue, address: settings.metricsAddress, port: settings.metricsPort, limits: limits,
            responder: MetricsResponder(token: settings.metricsBearerToken, readiness: readiness, watchdog: watchdog) { report.prometheusText() })
        return [("metrics", endpoint)]
    }

    /// The dashboard's HTTP endpoint and the bridge that feeds it, when `settings.dashboardPort`
    /// is set; bound now, so that a taken port stops the start. The bridge reaches advertised
    /// snapshot endpoints with `security`.
    private static func dashboardComponents(
        _ settings: Settings, context: Context, snapshotEndpoint: String?, security: SocketSecurity,
        titles: @escaping @Sendable (_ seen: Set<String>) -> [CourseTitle]
    ) throws -> [(name: String, component: any Component)] {
        guard settings.dashboardPort != 0 else { return [] }
        return try DashboardComponents.make(
            address: settings.dashboardAddress, port: settings.dashboardPort, setting: SettingKey.dashboardPort.rawValue,
            token: settings.dashboardToken, context: context, snapshotEndpoint: snapshotEndpoint, security: security, titles: titles)
    }

    /// What SIGHUP does: read the configuration sources again and apply the log level and
    /// format, then reload the catalog and the authorised keys. A source that has become
    /// invalid, or a key directory that cannot be read, is logged and the running configuration
    /// (and the old keys) kept; key reloads are counted by result (`lyceum_key_reloads_total`). When the reload removed or changed keys, the event sockets whose
    /// peers authenticated with their permissions are told (`revocations`).
    private static func reloader(
        _ sources: ConfigurationSources?, host: ServiceHost?, security: ProcessSecurity, revocations: Revocations
    ) -> @Sendable () -> Void {
        let logger = Logger(component: "reload")
        let keyReloads = (succeeded: Counter(label: "lyceum_key_reloads_total", dimensions: [("result", "succeeded")]),
                          failed: Counter(label: "lyceum_key_reloads_total", dimensions: [("result", "failed")]))
        return {
            if let keyRing = security.keyRing {
                do throws(KeyRingError) {
                    let change = try keyRing.reload()
                    keyReloads.succeeded.increment()
                    logger.info("keys reloaded", ["keys": String(keyRing.count), "added": change.added.joined(separator: ","),
                                                  "removed": change.removed.joined(separator: ","), "changed": change.changed.joined(separator: ",")])
                    revocations.revoked(change.revokedPermissions)
                } catch {
                    keyReloads.failed.increment()
                    logger.error("key reload failed; the running keys stay", ["error": error.description])
                }
            }
            if let sources {
                do throws(SettingsError) {
                    let fresh = try sources.resolve().settings
                    configureLogging(fresh)
                    logger.info("configuration reloaded", ["log_level": fresh.logLevel.description, "log_format": Logger.format.rawValue])
                } catch {
                    logger.error("configuration reload failed; the running configuration stays", ["error": error.description])
                }
            }
            host?.reloadCatalog()
        }
    }

    /// Runs the services `make` creates on a fresh context until a signal stops them, telling
    /// `readiness` (and so systemd) when they all run and when they stop. The
    /// context and every service are released before this returns, so the last messages are
    /// delivered before the caller closes journals or exits.
    private static func runGroup(
        logger: Logger, readiness: Readiness, reload: @escaping @Sendable () -> Void,
        _ make: (Context) throws -> [(name: String, component: any Component)]
    ) throws -> Int32 {
        // A failed sync of a journal or an epoch history (logged once by `StorageFailure`) stops
        // the process as SIGTERM does, so that the writers still waiting get their error replies
        // sent before the sockets close; the status then says why (protocol/journal.md, *A failed
        // sync*). A replicating worker's `make` puts a handler of its own in place of this one.
        StorageFailure.onStop { _ in kill(getpid(), SIGTERM) }
        let context = try Context()
        let services = try make(context)
        logger.info("starting", ["services": services.map(\.name).joined(separator: ",")])
        let stopped = ComponentGroup(services, readiness: readiness, reload: reload).run()
        let status = StorageFailure.first == nil ? stopped : StorageFailure.exitStatus
        logger.info("stopped", ["status": String(status)])
        // The counts of lines refused since the last summary, which the summaries' thread would
        // write within a second, are written before the process exits.
        Logger.writeSuppressedSummaries()
        return status
    }
}
