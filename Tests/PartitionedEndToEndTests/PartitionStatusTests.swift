import Foundation
import PartitionOperations
import LyceumTestSupport
import Testing

/// The node service's `describe` and `lyceum status`'s `partitions` member, against a real broker
/// and partitioned workers: every partition with its owner and journal, and the partitions with
/// no owner or with two flagged.
@Suite struct PartitionStatusTests {
    @Test func describeAndStatusShowThePartitionsTheirOwnersAndJournals() throws {
        let cluster = try Deployment.partitioned(owned: "0-3")
        try cluster.startWorker(registering: Deployment.servicesOfPartitions0to3)
        let learner = Deployment.learner(in: 1)
        #expect(try cluster.call("books.p1", #"{"op":"create","learner":"\#(learner)","title":"T","author":"A","genre":"Kids","rating":2}"#).isOK)

        let described = try cluster.call(NodeService.namePrefix + "w1", #"{"op":"describe"}"#)
        #expect(described.result["node"] as? String == "w1" && described.result["partitions"] as? Int == 8)
        let held = try PartitionedWorkerTests.describe(cluster)
        #expect(held.map { "\($0["service"]!).p\($0["partition"]!)" } == (0...3).map { "books.p\($0)" } + (0...3).map { "progress.p\($0)" })
        #expect(held.allSatisfy { $0["state"] == "serving" })
        let books1 = try #require(held.first { $0["service"] == "books" && $0["partition"] == "1" })
        #expect(books1["directory"] == cluster.root("w1") + "/books/p1" && books1["last_seq"] == "1")
        #expect(try cluster.call(NodeService.namePrefix + "w1", #"{"op":"nonsense"}"#).errorCode == "unknown_op")
        #expect(try cluster.call(NodeService.namePrefix + "w1", #"{"op":"describe","extra":1}"#).errorCode == "bad_request")

        // A second node holding partition 0 too (a copied directory): status flags it.
        let second = try TemporaryDirectory()
        defer { second.remove() }
        #expect(try LyceumProcess.run(["partitions", "init", "--data", second.path, "--partitions", "8", "--own", "0", "--service", "books"]).status == 0)
        var arguments = cluster.workerArguments("w1")
        arguments[arguments.firstIndex(of: "w1")!] = "w2"
        arguments[arguments.firstIndex(of: cluster.root("w1"))!] = second.path
        arguments.removeSubrange(arguments.lastIndex(of: "--service")!...arguments.lastIndex(of: "progress")!)
        let other = try LyceumProcess(arguments)
        defer { other.stop() }
        #expect(eventually { (try? cluster.isRegistered(NodeService.namePrefix + "w2")) == true }, "\(other.standardError)")

        let status = try LyceumProcess.run(["status", "--broker", cluster.endpoint])
        #expect(status.status == 0, "\(status.stderr)")
        let report = try parse(Array(status.stdout.utf8))
        #expect(report["services"] != nil && report["journals"] != nil)
        let partitions = try #require(report["partitions"] as? [String: Any])
        #expect(partitions["count"] as? Int == 8)
        #expect(partitions["contested"] as? Int == 1 && partitions["unowned"] as? Int == 8)
        let nodes = try #require(partitions["nodes"] as? [[String: Any]])
        #expect(nodes.compactMap { $0["node"] as? String } == ["w1", "w2"] && nodes.compactMap { $0["held"] as? Int } == [8, 1])
        let table = try #require(partitions["table"] as? [[String: Any]])
        #expect(table.count == 16)
        func row(_ service: String, _ partition: Int) -> [String: Any]? {
            table.first { $0["service"] as? String == service && $0["partition"] as? Int == partition }
        }
        #expect(row("books", 0)?["state"] as? String == "contested")
        #expect((row("books", 0)?["owners"] as? [[String: Any]])?.compactMap { $0["node"] as? String }.sorted() == ["w1", "w2"])
        #expect(row("progress", 0)?["state"] as? String == "owned")
        let owner = try #require((row("books", 1)?["owners"] as? [[String: Any]])?.first)
        #expect(owner["node"] as? String == "w1" && owner["directory"] as? String == cluster.root("w1") + "/books/p1" && owner["last_seq"] as? Int == 1)
        #expect(owner["bytes"] as? Int ?? 0 > 0)
        #expect(row("books", 4)?["state"] as? String == "unowned" && (row("books", 4)?["owners"] as? [Any])?.isEmpty == true)
    }
}
