import CommandSyntax
import Configuration
import Glibc
import JSON
import LearningServices
import Majordomo
import PartitionOperations
import Partitions
import ServiceHosting

/// `lyceum status`: asks the first broker that answers (of `broker`, tried in order) its
/// `mmi.status` management service and prints its answer, as tables (``StatusTable``) or as a
/// JSON object of the broker's services, worker counts, queue depths, uptime and (for
/// `serve`) journals. When node services (`lyceum.node.*`) are registered, or `partitions` is
/// set, it asks each node to `describe` itself and adds a `partitions` member: each partition's
/// owners and journals, flagging partitions with no owner or with two (PartitionOwnership).
public enum StatusCommand {
    /// How the answer is printed.
    public enum Format: Sendable {
        /// The JSON object, on one line: for scripts (`--json`, or standard output not a terminal).
        case json
        /// ``StatusTable``'s tables: for a person at a terminal.
        case table

        /// JSON when `json` was asked for or standard output is not a terminal, else tables.
        static func chosen(json: Bool) -> Format { json || isatty(STDOUT_FILENO) != 1 ? .json : .table }
    }

    /// `--json`: the JSON answer even on a terminal.
    static let jsonSwitch = Option("json", .none, help: "print the JSON answer, also on a terminal (the default when standard output is not one)")

    /// Exit statuses: 0 with the answer printed; 1 when the broker does not answer `mmi.status`
    /// (it is not a Lyceum broker) or refuses it (e.g. `forbidden` to a key without `manage`);
    /// 3 when no reply came.
    public static func run(settings: Settings, security: ProcessSecurity = .plaintext, format: Format = .json) -> Int32 {
        let reply: [[UInt8]]
        do {
            reply = try CallCommand.callOnce(ProcessReport.statusService, body: [[]], settings: settings.client, security: security)
        } catch {
            return CallCommand.exitStatus(reporting: error, of: "lyceum status", calling: ProcessReport.statusService, settings: settings.client)
        }
        guard reply.count == 1, reply[0] != MDP.notImplemented else {
            printError("lyceum status: the broker at \(settings.brokers.joined(separator: ", ")) does not answer \(ProcessReport.statusService)")
            return CallCommand.Status.errorReply
        }
        guard case .object(var status)? = try? JSONParser().parse(reply[0]) else {
            // Not an object: printed as it came, for the user to see.
            print(String(decoding: reply[0], as: UTF8.self))
            return CallCommand.Status.ok
        }
        let nodes = nodeServices(in: status)
        if !nodes.isEmpty || settings.partitions > 0 {
            let answers = nodes.map { PartitionOwnership.NodeAnswer(service: $0, result: describe($0, settings: settings, security: security)) }
            let services = ServiceRegistry.standard.descriptors.filter(\.isJournaled).map(\.name)
            status.append("partitions", PartitionOwnership(services: services, count: settings.partitionScheme?.count, answers: answers).json)
        }
        switch format {
        case .json: print(String(decoding: JSONValue.object(status).serialized(), as: UTF8.self))
        case .table: print(StatusTable.render(status), terminator: "")
        }
        return CallCommand.Status.ok
    }

    /// The names of the node services in an `mmi.status` answer, sorted.
    static func nodeServices(in status: JSONObject) -> [String] {
        guard case .array(let services)? = status["services"] else { return [] }
        return services.compactMap { service in
            guard case .string(let name)? = service["name"], name.hasPrefix(NodeService.namePrefix) else { return nil }
            return name
        }.sorted()
    }

    /// The `result` of `{"op":"describe"}` sent to the node service `service`, or why there is none.
    static func describe(
        _ service: String, settings: Settings, security: ProcessSecurity
    ) -> Result<JSONValue, PartitionOwnership.NodeError> {
        let reply: [[UInt8]]
        do {
            reply = try CallCommand.callOnce(service, body: [Array(#"{"op":"describe"}"#.utf8)], settings: settings.client, security: security)
        } catch let error as MajordomoError where error.code.isBrokerRejection {
            return .failure(.init(description: "the broker refused: \(error.code.rawValue): \(error.detail)"))
        } catch {
            return .failure(.init(description: "no reply within \(settings.timeout): \(error)"))
        }
        guard reply.count == 1, let answer = try? JSONParser().parse(reply[0]) else {
            return .failure(.init(description: "the reply is not one frame of JSON"))
        }
        guard answer["ok"] == .bool(true), let result = answer["result"] else {
            return .failure(.init(description: "error reply: \(String(decoding: reply[0].prefix(300), as: UTF8.self))"))
        }
        return .success(result)
    }
}
