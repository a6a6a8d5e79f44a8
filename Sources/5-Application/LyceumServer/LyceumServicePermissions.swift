import Majordomo
import PartitionOperations

extension ServicePermissions {
    /// Lyceum's policy for its brokers: a partitioned worker's node services
    /// (`lyceum.node.*`) need `manage_partitions`, Lyceum's other own services (`lyceum.*`,
    /// such as `lyceum.backup`) `manage`; the learning services need `call_services`.
    public static let lyceum = ServicePermissions([
        Rule(prefix: "lyceum.", permission: .manage),
        Rule(prefix: NodeService.namePrefix, permission: .managePartitions),
    ])
}
