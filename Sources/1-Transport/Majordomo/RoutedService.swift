/// A service whose requests the broker hands to one of several other services, chosen from the
/// request's first body frame: how a partitioned service's requests reach the workers of their
/// partition (`books` → `books.p17`).
///
/// The broker never interprets the body: ``choose`` does, and the broker asks it only for
/// requests addressed to ``name``, so other traffic pays one dictionary look-up. Clients see the
/// service they addressed: replies, error replies and rejections carry ``name``, never a
/// target's. A request ``choose`` leaves (`nil`) is served under ``name`` itself, by a local
/// service or workers of that name, as if nothing were routed. Targets are worker services: a
/// request routed to one waits in its queue, and gets `service_unknown` with the target's
/// ``Target/absenceText`` when no worker of it registers within the broker's
/// `unknownServiceTimeout`. 8/MMI's `mmi.service` answers `200` for ``name`` only while every
/// target has a worker.
public struct RoutedService: Sendable {
    /// One service a routed request may be handed to.
    public struct Target: Sendable {
        /// The worker service's name (`books.p17`).
        public let name: String
        /// The text of the `service_unknown` rejection of a request that waited in vain for a
        /// worker of this target (`no worker holds partition 17 of books`); it also answers
        /// requests that address the target by its own name.
        public let absenceText: String

        /// A target called `name`, whose absence is explained by `absenceText`.
        public init(name: String, absenceText: String) {
            self.name = name
            self.absenceText = absenceText
        }
    }

    /// The service clients address.
    public let name: String
    /// Where its requests may go, by the index ``choose`` returns.
    public let targets: [Target]
    /// The index in ``targets`` of the service a request goes to, from its first body frame's
    /// bytes (valid only during the call); `nil`, or an index outside ``targets``, leaves the
    /// request to ``name`` itself. Called on the broker's thread for every request to ``name``:
    /// it must be quick and must not block.
    public let choose: @Sendable (_ body: UnsafeRawBufferPointer) -> Int?

    /// A service called `name` whose requests go to the target `choose` picks among `targets`.
    public init(name: String, targets: [Target], choose: @escaping @Sendable (_ body: UnsafeRawBufferPointer) -> Int?) {
        self.name = name
        self.targets = targets
        self.choose = choose
    }
}
