import Majordomo
import Partitions
import ServiceHosting

/// How `lyceum broker --partitions N` routes the stateful services (the journaled ones of
/// the registry: `books`, `progress`): a request to one of them that names a top-level `learner` goes to the workers of that learner's partition
/// (`books.p17`); the rest is left to the ``PartitionCoordinator``.
public enum PartitionRouting {
    /// The services that are partitioned: the registry's journaled ones, as a partitioned
    /// worker's `ServiceHost` holds one instance of each per partition.
    static let services = ServiceRegistry.standard.journaledNames

    /// The broker's routing hook for each of ``services`` under `scheme`.
    public static func routedServices(_ scheme: PartitionScheme) -> [RoutedService] {
        services.map { service in
            let router = PartitionRouter(scheme: scheme, services: [service])
            let targets = scheme.all.map { partition in
                RoutedService.Target(name: PartitionName.service(service, partition: partition),
                                     absenceText: "no worker holds partition \(partition) of \(service)")
            }
            return RoutedService(name: service, targets: targets) { body in router.partition(service: service, body: body) }
        }
    }
}
