import JSON

/// Chooses the partition service a request for a partitioned service goes to, from the one
/// member it needs: the top-level `learner` string of the request body. It never parses the
/// rest, and it never answers: a request without a usable `learner` keeps its service name, for
/// whoever serves the service as a whole (the broker's coordinator, which fans out the ops that
/// span partitions and lets a partition give the usual error otherwise).
public struct PartitionRouter: Sendable {
    /// The partition scheme requests are routed by.
    public let scheme: PartitionScheme
    /// The services whose requests are routed (the stateful ones: `books`, `progress`).
    public let services: Set<String>
    private let parser: JSONParser

    /// A router of `services`' requests by `scheme`, reading bodies of at most `maxBodyBytes`.
    public init(scheme: PartitionScheme, services: Set<String>, maxBodyBytes: Int = 1 << 20) {
        self.scheme = scheme
        self.services = services
        parser = JSONParser(maxBytes: maxBodyBytes, maxDepth: 32)
    }

    /// The partition a request with `body` to `service` belongs to; `nil` when `service` is not
    /// partitioned or the body has no top-level `learner` string.
    public func partition(service: String, body: UnsafeRawBufferPointer) -> Int? {
        guard services.contains(service), case .string(let learner) = parser.member("learner", in: body) else { return nil }
        return scheme.partition(ofLearner: learner)
    }

    /// The service name a request with `body` to `service` is routed to: its partition's service
    /// (``PartitionName/service(_:partition:)``), or `service` itself when ``partition(service:body:)`` is `nil`.
    public func route(service: String, body: UnsafeRawBufferPointer) -> String {
        guard let partition = partition(service: service, body: body) else { return service }
        return PartitionName.service(service, partition: partition)
    }
}
