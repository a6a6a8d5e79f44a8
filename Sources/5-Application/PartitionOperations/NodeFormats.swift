import Coordination
import JSON
import Journal
import LearningServices
import LyceumLogging
import Replication

/// The formats a replicating worker reads, published in etcd so that its peers speak it the
/// newest both read (protocol/replication.md, *Format versions*): under
/// `lyceum/formats/<node>`, `{"replication":[1,2],"journal":[1,1],"contract":[1,N]}` (oldest and
/// newest of each), bound to a lease the node keeps alive, so that the entry goes with the
/// process. A node without an entry (an older build, or one stopped) is spoken to in the
/// oldest version, which every build reads.
public enum NodeFormats {
    /// Where the entries are: this, then the node's name.
    public static let keyPrefix = "lyceum/formats/"

    /// This build's entry.
    public static var own: JSONValue {
        func range(_ oldest: Int, _ newest: Int) -> JSONValue { .array([.integer(oldest), .integer(newest)]) }
        var entry = JSONObject()
        entry.append("replication", range(ReplicationFormat.oldest, ReplicationFormat.newest))
        entry.append("journal", range(Journal.formatVersion, Journal.formatVersion))
        entry.append("contract", range(Contract.versions.lowerBound, Contract.versions.upperBound))
        return .object(entry)
    }

    /// Publishes `node`'s entry under a lease of `timing`, kept alive until the returned
    /// keeper is stopped (with `revoke`, at the process's end).
    public static func publish(node: String, etcd: EtcdClient, timing: LeaseTiming) throws(CoordinationError) -> LeaseKeeper {
        let keeper = try LeaseKeeper(client: etcd, timing: timing, name: keyPrefix + node) { loss in
            // Peers then speak the oldest format to this node: slower to gain, never unsafe.
            Logger(component: "replica").warning("the formats entry's lease was lost; peers speak the oldest format to this node", [
                "node": node, "error": loss.description,
            ])
        }
        do { _ = try etcd.put(keyPrefix + node, value: own.serialized(), lease: keeper.lease.id) } catch {
            keeper.stop(revoke: true)
            throw error
        }
        return keeper
    }

    /// The newest replication format `node` published, or `nil` when it published none (an
    /// older build, a stopped node), or its entry cannot be read (etcd did not answer: the
    /// oldest is then spoken, which is safe).
    static func newestReplicationFormat(of node: String, in etcd: EtcdClient) -> Int? {
        let entry: KeyValue?
        do { entry = try etcd.get(keyPrefix + node) } catch { return nil }
        // An entry that is not this shape (written by something else) counts as none: the
        // oldest format is spoken then, which is safe.
        guard let entry, case .object(let object)? = try? JSONParser(maxBytes: 4096, maxDepth: 4).parse(entry.value),
              case .array(let range)? = object["replication"], range.count == 2, case .integer(let newest) = range[1] else { return nil }
        return newest
    }
}
