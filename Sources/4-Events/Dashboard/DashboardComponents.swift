import EventSubscription
import HTTPServer
import LyceumLifecycle
import ZeroMQ

/// The dashboard of a process: its HTTP endpoint (the page and the Server-Sent Events stream)
/// and the bridge that feeds the stream from the process's own events, in process.
public enum DashboardComponents {
    /// The in-process endpoint the publisher or forwarder also publishes on, for the bridge.
    public static let eventsEndpoint = "inproc://lyceum-dashboard-events"
    /// The in-process endpoint `serve`'s publisher also answers snapshots on.
    public static let snapshotEndpoint = "inproc://lyceum-dashboard-snapshots"

    /// The endpoint on `address:port`, bound now so that a taken port stops the start, and the
    /// bridge, named `dashboard` and `dashboard-bridge` for a `ComponentGroup`. With `token`, the
    /// page and the stream require it. Snapshots come from `snapshotEndpoint`, or, when `nil`,
    /// from the endpoint each source's heartbeats advertise, reached with `security`; `titles`
    /// gives the catalog's courses, with lesson titles at least for those `seen` in a batch of events. `setting` names the setting that chose the port, for errors.
    /// - Throws: `HTTPEndpointError` when the port cannot be bound, ``DashboardError`` when the
    ///   page is missing from the bundle, `ZMQError` when out of descriptors.
    public static func make(
        address: String, port: Int, setting: String, token: String?, context: Context, snapshotEndpoint: String?,
        security: SocketSecurity, titles: @escaping @Sendable (_ seen: Set<String>) -> [CourseTitle]
    ) throws -> [(name: String, component: any Component)] {
        let feed = try DashboardFeed()
        let endpoint = try HTTPEndpoint(
            name: "dashboard", setting: setting, address: address, port: port,
            limits: DashboardResponder.limits, responder: try DashboardResponder(feed: feed, token: token))
        let bridge = DashboardBridge(context: context, feed: feed, snapshotEndpoint: snapshotEndpoint, security: security, titles: titles)
        return [("dashboard", endpoint), ("dashboard-bridge", bridge)]
    }
}
