import Access
import Foundation
import JSON
import LearningServices
import LyceumLogging
import ServiceHosting

/// A partitioned worker's node service, `lyceum.node.<node>`: requests about the partitions this
/// process holds, as JSON ops (`{"op":"describe"}`), each answered by an entry of a table of
/// operations. Answered by the worker itself, not by a learning service; the broker admits only
/// callers that may manage partitions.
public struct NodeService: Sendable {
    /// The prefix of every node service's name.
    public static let namePrefix = "lyceum.node."

    /// One operation: it reads its parameters from `request` (reading none refuses any), and
    /// calls `reply` exactly once, during the call or later from any thread, with its result or
    /// its error. Throwing refuses the request without calling `reply`.
    public typealias Operation = @Sendable (
        _ request: inout Request, _ caller: Caller, _ reply: @escaping @Sendable (Result<JSONValue, ServiceError>) -> Void
    ) throws(ServiceError) -> Void

    /// `lyceum.node.<node>`.
    public let name: String
    private let operations: [String: Operation]

    /// The node service of `node`, answering the ops of `operations`.
    public init(node: String, operations: [String: Operation]) {
        name = Self.namePrefix + node
        self.operations = operations
    }

    /// The answer to request frames: the op's entry answers, an unknown op gets `unknown_op`
    /// naming the ops there are, a malformed request `bad_request`.
    public var answer: FrameHandler.Answer {
        let operations = operations
        let name = name
        return { frame, caller, reply in
            do throws(ServiceError) {
                var request = try Request(frame)
                try request.refuseRequestID()
                guard let operation = operations[request.op] else {
                    throw ServiceError(
                        .unknownOp, "\(name) has no operation \(PeerText.excerpt(request.op)); it has \(operations.keys.sorted().joined(separator: ", "))",
                        field: "$.op")
                }
                try operation(&request, caller) { result in
                    switch result {
                    case .success(let value): reply(value.successReplyFrame)
                    case .failure(let error): reply(error.replyFrame)
                    }
                }
            } catch {
                reply(error.replyFrame)
            }
        }
    }
}

extension NodeService {
    /// The node service of a partitioned worker: `describe` reports its node name, the
    /// cluster's partition count, each partition it serves with its journal, and the copies it
    /// renamed away in moves.
    public static func worker(node: String, partitions: Int, worker: PartitionedWorker) -> NodeService {
        NodeService(node: node, operations: ["describe": describe(node: node, partitions: partitions, worker: worker)])
    }

    /// `{"op":"describe"}` → `{"node", "partitions", "held": [{"service", "partition",
    /// "directory" (absolute), "last_seq", "bytes", "state"}], "moved": [{"service", "partition",
    /// "to", "directory"}]}`, in service order, then partition order; a replicating worker adds
    /// `"replicas": [{"service", "partition", "role", "epoch", "last_seq", "leader", "followers"}]`
    /// (``ReplicaStatus``), one per partition it holds a replica of, led or not. `formats` says
    /// which format versions the node reads (``NodeFormats/own``).
    static func describe(node: String, partitions: Int, worker: PartitionedWorker) -> Operation {
        { request, _, reply throws(ServiceError) in
            try request.read { (_) throws(JSONReadError) in }
            var held: [JSONValue] = []
            for hosted in worker.served {
                guard let partition = hosted.partition, let journal = hosted.journal else { continue }
                var entry = JSONObject()
                entry.append("service", .string(hosted.service.name))
                entry.append("partition", .integer(partition.partition))
                // Absolute, so that an operator reading status on another host can find it.
                entry.append("directory", .string(URL(fileURLWithPath: journal.directory).standardizedFileURL.path))
                entry.append("last_seq", .integer(Int(journal.lastSequence)))
                entry.append("bytes", .integer(Int(journal.size)))
                entry.append("state", .string("serving"))
                held.append(.object(entry))
            }
            var result = JSONObject()
            result.append("node", .string(node))
            result.append("partitions", .integer(partitions))
            result.append("formats", NodeFormats.own)
            result.append("held", .array(held))
            result.append("moved", .array(worker.movedAway.map { moved in
                ["service": .string(moved.service), "partition": .integer(moved.partition), "to": .string(moved.to),
                 "directory": .string(moved.directory)]
            }))
            let replicas = worker.replicaStatuses
            if !replicas.isEmpty {
                result.append("replicas", .array(replicas.map { .object($0.json) }))
            }
            reply(.success(.object(result)))
        }
    }
}
