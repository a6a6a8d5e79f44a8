import CommandSyntax
import Partitions

/// `lyceum partitions`: the cluster's partitions. `init` creates a worker host's share of them
/// when a cluster is created; moving them while serving is added beside it.
public enum PartitionsCommand {
    /// `lyceum partitions` and its subcommands.
    public static let declaration = Command(
        "partitions", summary: "create a worker host's partitions of a new cluster", subcommands: [initialize])

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
        let settings: Settings
        do throws(SettingsError) {
            settings = try CommandArguments(parsed, over: Settings()).settings
        } catch {
            throw UsageError(error.description)
        }
        guard let scheme = settings.partitionScheme else {
            throw UsageError(option: SettingKey.partitions.rawValue, "expected a partition count from \(PartitionScheme.counts.lowerBound) to \(PartitionScheme.counts.upperBound), got 0")
        }
        let partitions: [Int]
        do throws(PartitionError) {
            partitions = try scheme.partitions(inRanges: parsed.text(ownOption.name) ?? "")
        } catch {
            throw UsageError(option: ownOption.name, error.message)
        }
        let services = try partitionedServices(settings.origins[.service] == nil ? nil : settings.services)
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
    // from the command line only, since creating a cluster's partitions is a deliberate act.
    private static let dataOption = Option(
        SettingKey.data.rawValue, .text(placeholder: "DIR"), help: "the data directory of the worker host that will own them", required: true)
    private static let countOption = Option(
        SettingKey.partitions.rawValue, .text(placeholder: "N"), help: "the cluster's partition count (\(PartitionScheme.counts.lowerBound)-\(PartitionScheme.counts.upperBound))",
        required: true)
    private static let serviceOption = Option(
        SettingKey.service.rawValue, .text(placeholder: "NAME"), help: "a partitioned service (default: books and progress)", repeatable: true)
    private static let ownOption = Option(
        "own", .text(placeholder: "RANGES"), help: "the partitions this host owns: partitions and ranges, e.g. 0-5,9", required: true)

    /// The journaled services of `names` (all of them when `nil`), refusing a stateless one.
    private static func partitionedServices(_ names: [String]?) throws(UsageError) -> [String] {
        let journaled = ServiceRegistry.standard.descriptors.filter(\.isJournaled).map(\.name)
        guard let names else { return journaled }
        for name in names where !journaled.contains(name) {
            throw UsageError(option: SettingKey.service.rawValue, "\(name) keeps no journal and is not partitioned; the partitioned services are \(journaled.joined(separator: ", "))")
        }
        return names
    }
}
