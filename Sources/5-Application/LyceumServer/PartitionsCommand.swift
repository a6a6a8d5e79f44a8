import Access
import CommandSyntax
import Configuration
import Partitions
import ServiceHosting

/// `lyceum partitions`: the cluster's partitions. `init` creates a worker host's share of them
/// when a cluster is created; moving them while serving is added beside it.
public enum PartitionsCommand {
    /// `lyceum partitions` and its subcommands.
    public static let declaration = Command(
        "partitions", summary: "create a worker host's partitions of a new cluster, move them between workers",
        subcommands: [initialize, move, rebalance, prune])

    /// `lyceum partitions move P --to NODE [--from NODE | --leadership] [--service S]… [--broker EP]`.
    public static let move = Command.withSettings(
        "move", summary: "move partition P from the worker holding it to the worker NODE, while serving",
        discussion: """
            Moves P of each service (default: books, then progress), one at a time; the partition's requests are
            delayed meanwhile, not lost (protocol/partitions.md, "Moving a partition"). exit status: 0 moved (or
            already there); 1 refused or failed, the source serves it as before; 2 bad command line; 3 no answer;
            4 the source gave it up but the target has not adopted it: run the same command again. With replicas
            above 1 it moves one replica: the one of --from, or the leader's; the set goes on without it during
            the copy, and the moved replica follows (and catches up) on NODE (docs/cluster.md, "Replicated partitions");
            with --leadership, only the leadership moves, to NODE's replica
            """,
        keys: SettingKey.taken(by: .partitionsMove), options: [toOption, fromOption, leadershipOption, serviceOption],
        positionals: [Positional("P", help: "the partition number")]
    ) { resolved, sources throws(UsageError) in
        let settings = resolved.settings
        guard let partition = Int(resolved.positionals[0]), (0..<PartitionScheme.counts.upperBound).contains(partition) else {
            throw UsageError("P: expected a partition number from 0 to \(PartitionScheme.counts.upperBound - 1), got \(resolved.positionals[0])")
        }
        let target = sources.commandLine.text(toOption.name) ?? ""
        guard Identifier.isValid(target) else {
            throw UsageError(option: toOption.name, "expected a node name, got '\(target)'")
        }
        let source = sources.commandLine.text(fromOption.name)
        if let source, !Identifier.isValid(source) || source == target {
            throw UsageError(option: fromOption.name, "expected a node name other than --to's, got '\(source)'")
        }
        let leadership = sources.commandLine.contains(leadershipOption.name)
        if leadership, source != nil {
            throw UsageError(option: leadershipOption.name, "the leadership moves from the node leading: leave --from out")
        }
        let services = try partitionedServices(sources.commandLine)
        return PartitionMoveCommand.run(
            partition: partition, from: source, to: target, leadership: leadership, services: services, settings: settings,
            security: try LyceumCommands.clientSecurity(settings))
    }

    /// `lyceum partitions rebalance [--service S]… [--broker EP]`.
    public static let rebalance = Command.withSettings(
        "rebalance", summary: "move partitions (with replicas: leaderships) one at a time until every worker has an even share",
        discussion: "Prints each move; with replicas, the leaderships per node before and after. exit status: as for 'partitions move', for the first move that did not succeed",
        keys: SettingKey.taken(by: .partitionsRebalance), options: [serviceOption]
    ) { resolved, sources throws(UsageError) in
        let settings = resolved.settings
        return PartitionMoveCommand.rebalance(
            services: try partitionedServices(sources.commandLine), settings: settings, security: try LyceumCommands.clientSecurity(settings))
    }

    /// `lyceum partitions prune --data DIR [--older-than AGE] [--service S]… [--dry-run]`.
    public static let prune = Command(
        "prune", summary: "remove the copies of partitions that moves renamed away on this host",
        discussion: """
            Removes DIR/<service>/p<N>.moved-to-<node>-<time>/ when its manifest names partition N of that service,
            printing each and the bytes freed; never a live p<N>. Safe only once the target has adopted the partition
            ('lyceum status' shows it as the owner): until then the copy is what finishes the move. exit status:
            0 pruned (or nothing to prune); 1 a directory named like a copy is not one, or cannot be removed: kept;
            2 bad command line
            """,
        options: [sourceDataOption, olderThanOption, serviceOption, dryRunOption]
    ) { parsed throws(UsageError) in
        let settings = try commandLineSettings(parsed)
        return PartitionPrune(
            dataDirectory: settings.dataDirectory, services: try partitionedServices(parsed),
            olderThan: parsed.duration(olderThanOption.name), dryRun: parsed.contains(dryRunOption.name)
        ).run()
    }

    /// The flags of `init` and `prune` (named and checked as the settings `data`, `partitions`
    /// and `service` are) over the defaults: creating or removing a host's partitions is a
    /// deliberate act, so these two read no file or environment, and say so in `--help`.
    private static func commandLineSettings(_ parsed: ParsedArguments) throws(UsageError) -> Settings {
        do throws(SettingsError) {
            return try CommandArguments(parsed, accepting: [.data, .partitions], over: Settings()).settings
        } catch {
            throw UsageError(error.description)
        }
    }

    /// `lyceum partitions init --data DIR --partitions N --own RANGES [--service S]…`.
    public static let initialize = Command(
        "init", summary: "create the journal directories (and manifests) of the partitions this host will own",
        discussion: """
            Creates DIR/<service>/p<N>/PARTITION for each owned partition N of each service (default: every
            partitioned service, books and progress). Refuses, creating nothing, when any of them exists or a
            manifest already under DIR has another partition count. exit status: 0 created; 2 refused
            """,
        options: [dataOption, countOption, ownOption, serviceOption]
    ) { parsed throws(UsageError) in
        let settings = try commandLineSettings(parsed)
        guard let scheme = settings.partitionScheme else {
            throw UsageError(option: SettingKey.partitions.rawValue, "expected a partition count from \(PartitionScheme.counts.lowerBound) to \(PartitionScheme.counts.upperBound), got 0")
        }
        let partitions: [Int]
        do throws(PartitionError) {
            partitions = try scheme.partitions(inRanges: parsed.text(ownOption.name) ?? "")
        } catch {
            throw UsageError(option: ownOption.name, error.message)
        }
        let services = try partitionedServices(parsed)
        do throws(PartitionLayoutError) {
            for directory in try PartitionLayout(dataDirectory: settings.dataDirectory, scheme: scheme).create(services: services, partitions: partitions) {
                print(directory)
            }
            return 0
        } catch {
            printError("lyceum partitions init: \(error)")
            return 2
        }
    }

    // Flags named and checked as the settings `data`, `partitions` and `service` are; taken
    // from the command line only (commandLineSettings).
    private static let dataOption = Option(
        SettingKey.data.rawValue, .text(placeholder: "DIR"), help: "the data directory of the worker host that will own them", required: true)
    private static let countOption = Option(
        SettingKey.partitions.rawValue, .text(placeholder: "N"), help: "the cluster's partition count (\(PartitionScheme.counts.lowerBound)-\(PartitionScheme.counts.upperBound))",
        required: true)
    private static let serviceOption = Option(
        SettingKey.service.rawValue, .text(placeholder: "NAME"), help: "a partitioned service (default: books and progress); command line only", repeatable: true)
    private static let toOption = Option(
        "to", .text(placeholder: "NODE"), help: "the node name of the worker to move the partition to", required: true)
    private static let fromOption = Option(
        "from", .text(placeholder: "NODE"),
        help: "the worker whose copy moves (with replicas above 1: any replica's holder); default: the one serving it")
    private static let leadershipOption = Option(
        "leadership", .none, help: "with replicas above 1: move only the leadership, to the replica on --to's node")
    private static let sourceDataOption = Option(
        SettingKey.data.rawValue, .text(placeholder: "DIR"), help: "the data directory of the worker host that moved the partitions away", required: true)
    private static let olderThanOption = Option(
        "older-than", .duration(placeholder: "AGE"), help: "only copies renamed away longer ago than AGE (e.g. 12h, 7d); default: any")
    private static let dryRunOption = Option("dry-run", .none, help: "print what would be removed, and remove nothing")
    private static let ownOption = Option(
        "own", .text(placeholder: "RANGES"), help: "the partitions this host owns: partitions and ranges, e.g. 0-5,9", required: true)

    /// The journaled services `--service` names in `parsed` (all of them when none is given),
    /// refusing a stateless one.
    private static func partitionedServices(_ parsed: ParsedArguments) throws(UsageError) -> [String] {
        let journaled = ServiceRegistry.standard.descriptors.filter(\.isJournaled).map(\.name)
        let names = parsed.values(serviceOption.name)
        guard !names.isEmpty else { return journaled }
        for name in names where !journaled.contains(name) {
            throw UsageError(option: SettingKey.service.rawValue, "\(name) keeps no journal and is not partitioned; the partitioned services are \(journaled.joined(separator: ", "))")
        }
        return names
    }
}
