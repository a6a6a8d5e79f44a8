import Coordination
import Foundation
import LyceumTestSupport
import Testing

/// The gateway client against a real etcd: leases, keys, transactions on revisions, watches.
@Suite(.serialized, .offTheCooperativePool) struct EtcdClientTests {
    @Test func leaseIsGrantedRenewedAndExpiresTakingItsKeys() throws {
        let etcd = try EtcdServer()
        defer { etcd.remove() }
        let client = try EtcdClient(endpoints: [etcd.endpoint])
        let lease = try client.grantLease(ttlSeconds: 2)
        #expect(lease.ttlSeconds == 2)
        try client.put("test/bound", value: Array("x".utf8), lease: lease.id)
        #expect(try client.keepAlive(lease: lease.id) > 0)
        #expect(try client.get("test/bound")?.lease == lease.id)
        // Not renewed any more: etcd expires it and deletes its key.
        #expect(eventually { (try? client.get("test/bound")) == .some(nil) })
        let expired = #expect(throws: CoordinationError.self) { try client.keepAlive(lease: lease.id) }
        #expect(expired?.kind == .leaseExpired)
        #expect(expired?.endpoint == etcd.endpoint)
    }

    @Test func transactionsCompareRevisions() throws {
        let etcd = try EtcdServer()
        defer { etcd.remove() }
        let client = try EtcdClient(endpoints: [etcd.endpoint])
        let created = Transaction(compare: [.createRevision(key: "test/k", equals: 0)], success: [.put(key: "test/k", value: [1, 2], lease: 0)], failure: [.get(key: "test/k")])
        let first = try client.transaction(created)
        #expect(first.succeeded)
        // The same transaction again finds the key: the failure branch reads it.
        let second = try client.transaction(created)
        #expect(!second.succeeded)
        guard case .range(let values)? = second.responses.first else { Issue.record("no range response"); return }
        #expect(values.first?.value == [1, 2])
        let revision = try #require(values.first?.modRevision)
        let stale = try client.transaction(Transaction(compare: [.modRevision(key: "test/k", equals: revision - 1)], success: [.delete(key: "test/k")]))
        #expect(!stale.succeeded)
        let current = try client.transaction(Transaction(compare: [.modRevision(key: "test/k", equals: revision)], success: [.delete(key: "test/k")]))
        #expect(current.succeeded && current.responses == [.delete(count: 1)])
        try client.put("test/a", value: [1])
        try client.put("test/b", value: [2])
        try client.put("tesu", value: [3])
        #expect(try client.list(prefix: "test/").values.map(\.key) == ["test/a", "test/b"])
        #expect(try client.delete("test/a") == 1)
        #expect(try client.get("test/a") == nil)
    }

    @Test func watchSeesPutsAndDeletesInOrder() throws {
        let etcd = try EtcdServer()
        defer { etcd.remove() }
        let client = try EtcdClient(endpoints: [etcd.endpoint])
        let watch = try client.watch("test/", prefix: true)
        #expect(try watch.next(timeout: .milliseconds(100)) == nil)
        try client.put("test/w", value: [7])
        try client.delete("test/w")
        var events: [WatchEvent] = []
        _ = try eventually {
            events += try watch.next(timeout: .milliseconds(200)) ?? []
            return events.count >= 2
        }
        #expect(events.map(\.kind) == [.put, .delete])
        #expect(events.first?.keyValue.value == [7])
    }

    @Test func aDeadMemberIsSkippedForTheNextOne() throws {
        let etcd = try EtcdServer()
        defer { etcd.remove() }
        let dead = "http://127.0.0.1:\(try freeLoopbackPorts(count: 1))"
        let client = try EtcdClient(endpoints: [dead, etcd.endpoint])
        try client.put("test/failover", value: [1])
        #expect(try client.get("test/failover")?.value == [1])
        let alone = try EtcdClient(endpoints: [dead])
        let refused = #expect(throws: CoordinationError.self) { try alone.get("test/failover") }
        #expect(refused?.kind == .unreachable)
        #expect(refused?.endpoint == dead)
    }
}
