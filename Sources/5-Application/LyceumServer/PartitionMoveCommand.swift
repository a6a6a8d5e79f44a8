import Configuration
import Foundation
import JSON
import Majordomo
import PartitionOperations
import Partitions
import ZeroMQ

/// `lyceum partitions move P --to NODE`: finds the node holding partition P of each service
/// through the brokers' `mmi.status` and every node service's `describe`, asks it to move the
/// partition to NODE, and prints each step and the result. `lyceum partitions rebalance` makes
/// the moves of a `RebalancePlan` (of a `LeadershipPlan` for a replicated service), one at a time.
public enum PartitionMoveCommand {
    /// Exit statuses.
    public enum Status {
        /// Every partition asked for is held by the target now.
        public static let moved: Int32 = 0
        /// A move was refused or failed before the source gave the partition up: the source
        /// serves it again, nothing changed; the message says why.
        public static let refused: Int32 = 1
        /// A move failed after the source gave the partition up: nobody serves it until the same
        /// command is run again, which finishes it.
        public static let unfinished: Int32 = 4
        /// No answer (from the brokers, or from the source within the move's time limit): run
        /// `lyceum status` and then the same command again.
        public static let noReply: Int32 = 3
    }

    /// How long the source may take to answer a `move` when `timeout` is not given: the copy runs
    /// at disk and network speed (a 1 GiB journal at 50 MiB/s takes 20 s).
    static let moveTimeout: Duration = .seconds(600)

    /// Moves `partition` of each of `services`, one after the other, to the node `target`: from
    /// `chosen` when given (a replica's holder, with replicas above 1), else from the node
    /// serving it.
    public static func run(
        partition: Int, from chosen: String? = nil, to target: String, leadership: Bool = false, services: [String], settings: Settings,
        security: ProcessSecurity
    ) -> Int32 {
        let describes: [String: JSONValue]
        do { describes = try nodes(settings: settings, security: security) } catch {
            printError("lyceum partitions move: \(error)")
            return Status.noReply
        }
        guard describes[target] != nil else {
            printError("lyceum partitions move: no node \(target) is connected (nodes: \(describes.keys.sorted().joined(separator: ", ")))")
            return Status.refused
        }
        if let chosen, describes[chosen] == nil {
            printError("lyceum partitions move: no node \(chosen) is connected (nodes: \(describes.keys.sorted().joined(separator: ", ")))")
            return Status.refused
        }
        for service in services {
            let name = "\(service).p\(partition)"
            let holders = PartitionHolders(service: service, partition: partition, target: target, describes: describes)
            let source: String
            switch chosen.map { .success($0) } ?? holders.source(target: target) {
            case .success(let node): source = node
            case .failure(.alreadyThere):
                print("\(name) is already held by \(target)")
                continue
            case .failure(.noHolder):
                printError("lyceum partitions move: no connected node holds \(name)")
                return Status.refused
            case .failure(.ambiguous(let nodes)):
                printError("lyceum partitions move: \(name) is claimed by several nodes (\(nodes.joined(separator: ", "))); resolve that first")
                return Status.refused
            }
            print("moving \(leadership ? "the leadership of " : "")\(name) from \(source) to \(target) …")
            let status = move(service: service, partition: partition, from: source, to: target, leadership: leadership, settings: settings, security: security)
            guard status == Status.moved else { return status }
        }
        return Status.moved
    }

    /// Evens out the partitions of each of `services` over the connected nodes, one move at a
    /// time, printing each; stops at the first move that does not succeed, with its status. For
    /// a replicated service (its nodes report `replicas`), it evens out the leaderships instead
    /// (`rebalanceLeaderships`).
    public static func rebalance(services: [String], settings: Settings, security: ProcessSecurity) -> Int32 {
        for service in services {
            let describes: [String: JSONValue]
            do { describes = try nodes(settings: settings, security: security) } catch {
                printError("lyceum partitions rebalance: \(error)")
                return Status.noReply
            }
            if describes.values.contains(where: { !LeadershipPlan.replicas(of: service, in: $0).isEmpty }) {
                let status = rebalanceLeaderships(service: service, describes: describes, settings: settings, security: security)
                guard status == Status.moved else { return status }
                continue
            }
            let plan = RebalancePlan(holdings: describes.mapValues { PartitionHolders.partitions(of: service, in: $0["held"]) })
            if plan.moves.isEmpty { print("\(service): balanced over \(describes.count) nodes") }
            for step in plan.moves {
                print("moving \(service).p\(step.partition) from \(step.from) to \(step.to) …")
                let status = move(service: service, partition: step.partition, from: step.from, to: step.to, settings: settings, security: security)
                guard status == Status.moved else { return status }
            }
        }
        return Status.moved
    }

    static func move(
        service: String, partition: Int, from source: String, to target: String, leadership: Bool = false, settings: Settings, security: ProcessSecurity
    ) -> Int32 {
        // One id for every time the request is sent (to the next broker after a timeout), so
        // that the source answers a resend with this move's outcome.
        let id = "move-" + String(UInt64.random(in: 0...UInt64.max), radix: 16)
        let request = PartitionMoveRequest.move(PartitionMoveTicket(service: service, partition: partition, from: "", to: target), id: id, leadership: leadership)
        var long = settings.client
        // The move's own limit, unless --timeout says otherwise.
        if settings.origins[.timeout] == nil { long.timeout = moveTimeout }
        let frames: [[UInt8]]
        do {
            frames = try CallCommand.callOnce(NodeService.namePrefix + source, body: request.frames, settings: long, security: security)
        } catch let error as MajordomoError where error.code.isBrokerRejection {
            printError("lyceum partitions move: the broker refused the move: \(error.code.rawValue): \(error.detail)")
            return Status.refused
        } catch {
            printError("lyceum partitions move: no answer from \(source): \(error); run 'lyceum status' and then this command again")
            return Status.noReply
        }
        guard frames.count == 1, let reply = try? JSONParser().parse(frames[0]) else {
            printError("lyceum partitions move: \(source) answered with something other than one JSON frame")
            return Status.refused
        }
        guard reply["ok"] == .bool(true) else {
            let text = reply["error"]?["message"].map { if case .string(let text) = $0 { text } else { "\($0)" } } ?? "\(reply)"
            printError("lyceum partitions move: \(text)")
            // A move answers `conflict` only when the source has given the partition up (see PartitionMoveFailure).
            return reply["error"]?["code"] == .string("conflict") ? Status.unfinished : Status.refused
        }
        print(String(decoding: (reply["result"] ?? reply).serialized(), as: UTF8.self))
        return Status.moved
    }

    /// Every connected node's `describe` result, by node name, asked as `lyceum status` asks.
    /// - Throws: when the brokers or a node do not answer: a move decided on part of the cluster
    ///   could pick a wrong source.
    static func nodes(settings: Settings, security: ProcessSecurity) throws -> [String: JSONValue] {
        let reply = try CallCommand.callOnce(ProcessReport.statusService, body: [[]], settings: settings.client, security: security)
        guard reply.count == 1, case .object(let status)? = try? JSONParser().parse(reply[0]) else {
            throw PartitionOwnership.NodeError(description: "the broker does not answer \(ProcessReport.statusService)")
        }
        var describes: [String: JSONValue] = [:]
        for service in StatusCommand.nodeServices(in: status) {
            let node = String(service.dropFirst(NodeService.namePrefix.count))
            describes[node] = try StatusCommand.describe(service, settings: settings, security: security).mapError { error in
                PartitionOwnership.NodeError(description: "\(service): \(error)")
            }.get()
        }
        return describes
    }
}
