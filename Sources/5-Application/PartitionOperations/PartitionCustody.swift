/// What a partition move needs from the worker host holding the partitions: where a partition's
/// journal directory is, and stopping and starting one partition while the others keep serving.
protocol PartitionCustody: Sendable {
    /// This worker's node name (its node service is `lyceum.node.<node>`).
    var node: String { get }
    /// The journal directory of `partition` of `service`: `DATA/<service>/p<partition>`.
    func directory(service: String, partition: Int) -> String
    /// Whether this worker serves `partition` of `service` now.
    func isServing(service: String, partition: Int) -> Bool
    /// Refuses, before any of it is received, a partition this worker could not serve as well
    /// as the ones it serves (its sessions would not fit the process); admits one it serves.
    /// - Throws: a `ServiceError` (`unavailable`) saying why.
    func admit(service: String, partition: Int) throws
    /// Stops serving the partition: its sessions leave every broker (which then holds its
    /// requests for up to `unknown-service-timeout`), requests in progress finish and become
    /// durable, and its journal is closed, unlocking the directory.
    /// - Throws: when the partition is not served here; nothing changes then.
    func release(service: String, partition: Int) throws
    /// Opens the partition's journal directory, replays it and serves it with every broker; does
    /// nothing when it is already served.
    func serve(service: String, partition: Int) throws
    /// Hands the leadership of a replicated partition this node leads over to the replica on
    /// node `successor` (protocol/replication.md, *Handing a leadership over*).
    /// - Throws: a `ServiceError` when the partition is not replicated or not led here.
    func handOff(service: String, partition: Int, to successor: String) throws
}
