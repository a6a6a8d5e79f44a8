import EventSubscription
import EventPublishing

/// The services a Lyceum process can serve, one `ServiceDescriptor` each. `standard` lists
/// Lyceum's own; a test (or a product built on Lyceum) adds its own with `adding(_:)` and passes
/// the result to `ServiceHost` and `ServerProcesses`.
public struct ServiceRegistry: Sendable {
    /// The services, in the order `serve` starts them.
    public let descriptors: [ServiceDescriptor]

    /// A registry of `descriptors`, whose names must differ.
    public init(_ descriptors: [ServiceDescriptor]) {
        precondition(Set(descriptors.map(\.name)).count == descriptors.count, "two services share a name")
        self.descriptors = descriptors
    }

    /// The service names, in order.
    public var names: [String] { descriptors.map(\.name) }

    /// The names of the services with a journal, in order: the ones a cluster partitions.
    public var journaledNames: [String] { descriptors.filter(\.isJournaled).map(\.name) }

    /// The event streams of the services, in order: what every publisher of this registry's
    /// services numbers, whichever of them it serves.
    public var eventStreams: [any PublishedStream] { descriptors.compactMap(\.eventStream) }

    /// This registry with `descriptor` added (replacing one of the same name).
    public func adding(_ descriptor: ServiceDescriptor) -> ServiceRegistry {
        ServiceRegistry(descriptors.filter { $0.name != descriptor.name } + [descriptor])
    }

    /// The descriptor of the service `name`, or `nil` when the registry lists no such service.
    public subscript(name: String) -> ServiceDescriptor? {
        descriptors.first { $0.name == name }
    }

    /// The descriptor of `name`.
    /// - Throws: `ServiceRegistryError` naming the services there are.
    public func descriptor(named name: String) throws(ServiceRegistryError) -> ServiceDescriptor {
        guard let descriptor = self[name] else {
            throw ServiceRegistryError(name: name, known: names)
        }
        return descriptor
    }
}

/// A service name the registry does not list.
public struct ServiceRegistryError: Error, Sendable, CustomStringConvertible {
    /// The name asked for.
    public let name: String
    /// The names the registry lists.
    public let known: [String]

    /// `no service 'x'; the services are catalog, progress, books`.
    public var description: String { "no service '\(name)'; the services are \(known.joined(separator: ", "))" }
}
