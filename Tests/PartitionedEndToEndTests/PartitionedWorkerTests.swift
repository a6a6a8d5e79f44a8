import Foundation
import PartitionOperations
import LyceumTestSupport
import Testing

/// A partitioned `lyceum worker` behind a real `lyceum broker` (8 partitions, the worker holding
/// 0–3): it registers exactly its partitions' services and its node service, serves a learner
/// through their partition's service, refuses a learner of another partition without writing,
/// keeps acknowledged writes across kill -9, and refuses to start on a wrong manifest.
@Suite(.serialized) struct PartitionedWorkerTests {
    @Test func registersExactlyItsPartitionsAndServesTheirLearners() throws {
        let cluster = try Deployment.partitioned(owned: "0-3")
        try cluster.startWorker(registering: Deployment.servicesOfPartitions0to3)
        for service in ["books.p4", "books.p7", "progress.p5", "books", "progress"] {
            #expect(try !cluster.isRegistered(service), "\(service)")
        }
        let ada = Deployment.learner(in: 2)
        let created = try cluster.call("books.p2", #"{"op":"create","learner":"\#(ada)","title":"Dune","author":"Frank Herbert","genre":"Fantasy","rating":5}"#)
        #expect(created.isOK, "\(created)")
        let id = try #require((created.result["book"] as? [String: Any])?["id"] as? String)
        #expect(try cluster.call("books.p2", #"{"op":"get","learner":"\#(ada)","id":"\#(id)"}"#).isOK)
        let listed = try cluster.call("books.p2", #"{"op":"list","learner":"\#(ada)"}"#)
        #expect((listed.result["books"] as? [Any])?.count == 1)
        let begun = try cluster.call("progress.p2", #"{"op":"begin_course","learner":"\#(ada)","course":"swiftui-essentials"}"#)
        #expect(begun.isOK, "\(begun)")
    }

    @Test func aLearnerOfAnotherPartitionIsRefusedAndNothingIsWritten() throws {
        let cluster = try Deployment.partitioned(owned: "0-3")
        try cluster.startWorker(registering: Deployment.servicesOfPartitions0to3)
        let before = try Self.describe(cluster)
        for (service, body) in [
            ("books.p0", #"{"op":"create","learner":"\#(Deployment.learner(in: 1))","title":"T","author":"A","genre":"Fantasy","rating":3}"#),
            ("books.p0", #"{"op":"create","learner":"\#(Deployment.learner(in: 6))","title":"T","author":"A","genre":"Fantasy","rating":3,"request_id":"r-1"}"#),
            ("progress.p3", #"{"op":"begin_course","learner":"\#(Deployment.learner(in: 0))","course":"swiftui-essentials"}"#),
        ] {
            let reply = try cluster.call(service, body)
            #expect(reply.errorCode == "bad_request", "\(reply)")
            let error = reply["error"] as? [String: Any]
            #expect(error?["field"] as? String == "$.learner")
            let message = error?["message"] as? String ?? ""
            #expect(message.contains("of 8, not to partition \(service.split(separator: "p").last!)"), "\(message)")
        }
        #expect(try Self.describe(cluster) == before, "a journal changed")
    }

    @Test func journalMetricsCarryThePartition() throws {
        let cluster = try Deployment.partitioned(owned: "0-3")
        let port = try freeLoopbackPort()
        try cluster.startWorker(registering: Deployment.servicesOfPartitions0to3, arguments: ["--metrics-port", String(port)])
        let learner = Deployment.learner(in: 3)
        #expect(try cluster.call("books.p3", #"{"op":"create","learner":"\#(learner)","title":"T","author":"A","genre":"Kids","rating":2}"#).isOK)
        let metrics = try Metrics.scrape(port: port)
        #expect(metrics.value("lyceum_journal_last_sequence", ["service": "books", "partition": "3"]) == 1)
        #expect(metrics.value("lyceum_journal_appends_total", ["service": "books", "partition": "3"]) == 1)
        let partitions = Set(metrics.samples.filter { $0.name == "lyceum_journal_last_sequence" }.compactMap { $0.labels["partition"] })
        #expect(partitions == ["0", "1", "2", "3"])
    }

    @Test func acknowledgedWritesOnSeveralPartitionsSurviveKillNine() throws {
        let cluster = try Deployment.partitioned(owned: "0-3")
        try cluster.startWorker(registering: Deployment.servicesOfPartitions0to3)
        var books: [(partition: Int, learner: String, id: String)] = []
        for partition in 0...3 {
            for index in 0..<2 {
                let learner = Deployment.learner(in: partition, index: index)
                let created = try cluster.call(
                    "books.p\(partition)", #"{"op":"create","learner":"\#(learner)","title":"T\#(index)","author":"A","genre":"Poetry","rating":4}"#)
                try #require(created.isOK, "\(created)")
                books.append((partition, learner, try #require((created.result["book"] as? [String: Any])?["id"] as? String)))
            }
            #expect(try cluster.call("progress.p\(partition)", #"{"op":"begin_course","learner":"\#(Deployment.learner(in: partition))","course":"swiftui-essentials"}"#).isOK)
        }
        cluster.killWorker(SIGKILL)
        try cluster.startWorker(registering: Deployment.servicesOfPartitions0to3)
        for book in books {
            let got = try cluster.call("books.p\(book.partition)", #"{"op":"get","learner":"\#(book.learner)","id":"\#(book.id)"}"#)
            #expect(got.isOK, "partition \(book.partition): \(got)")
        }
        for partition in 0...3 {
            let got = try cluster.call("progress.p\(partition)", #"{"op":"get","learner":"\#(Deployment.learner(in: partition))","course":"swiftui-essentials"}"#)
            #expect(got.isOK, "progress partition \(partition): \(got)")
        }
    }

    @Test func journalCheckOfThePartitionedDataDirectoryChecksEveryPartitionAsItsService() throws {
        let cluster = try Deployment.partitioned(owned: "0-1")
        try cluster.startWorker(registering: ["books.p0", "books.p1", "progress.p0", "progress.p1"])
        let learner = Deployment.learner(in: 1)
        #expect(try cluster.call("books.p1", #"{"op":"create","learner":"\#(learner)","title":"T","author":"A","genre":"Kids","rating":2}"#).isOK)
        cluster.killWorker(SIGTERM)
        let checked = try LyceumProcess.run(["journal", "check", "--data", cluster.root("w1")])
        #expect(checked.status == 0, "\(checked.stdout)\(checked.stderr)")
        let headings = checked.stdout.split(separator: "\n").filter { $0.hasPrefix("== ") }.map { $0.dropFirst(3) }
        #expect(headings == ["progress/p0", "progress/p1", "books/p0", "books/p1"].map { Substring(cluster.root("w1") + "/" + $0) })
        #expect(checked.stdout.components(separatedBy: "decoded as books").count == 3, "\(checked.stdout)")
        #expect(checked.stdout.contains("books=1"), "\(checked.stdout)")
    }

    @Test func aManifestOfAnotherCountStopsTheStartNamingTheFile() throws {
        let cluster = try Deployment.partitioned(owned: "0-3")
        let manifest = cluster.root("w1") + "/books/p2/PARTITION"
        try #"{"service":"books","partition":2,"partitions":16}"#.write(toFile: manifest, atomically: true, encoding: .utf8)
        let worker = try LyceumProcess(cluster.workerArguments("w1"))
        #expect(worker.waitForExit() == 2)
        #expect(worker.standardError.contains(manifest) && worker.standardError.contains("says 16 partitions; this cluster has 8"), "\(worker.standardError)")
    }

    @Test(arguments: [
        ("books/p9", #"{"service":"books","partition":9,"partitions":8}"#, "partition 9 is outside 0-7"),
        ("books/p3", #"{"service":"books","partition":2,"partitions":8}"#, "names partition 2 of books, but its directory is that of partition 3"),
        ("progress/p3", #"{"service":"books","partition":3,"partitions":8}"#, "names partition 3 of books, but its directory is that of partition 3 of progress"),
        ("books/p1", "not json", "is not a partition manifest"),
    ])
    func aDirectoryThatIsNotThePartitionItsNameSaysStopsTheStart(directory: String, manifest: String, message: String) throws {
        let cluster = try Deployment.partitioned(owned: "0-3")
        try FileManager.default.createDirectory(atPath: cluster.root("w1") + "/" + directory, withIntermediateDirectories: true)
        try manifest.write(toFile: cluster.root("w1") + "/" + directory + "/PARTITION", atomically: true, encoding: .utf8)
        let worker = try LyceumProcess(cluster.workerArguments("w1"))
        #expect(worker.waitForExit() == 2)
        #expect(worker.standardError.contains(directory) && worker.standardError.contains(message), "\(worker.standardError)")
    }

    @Test func theOtherKindOfJournalInAServiceDirectoryStopsTheStart() throws {
        let cluster = try Deployment.partitioned(owned: "0-3")
        // An unpartitioned worker over partitions would open an empty journal beside them.
        var unpartitioned = cluster.workerArguments("w1")
        unpartitioned.removeSubrange(unpartitioned.firstIndex(of: "--partitions")!...unpartitioned.firstIndex(of: "8")!)
        let plain = try LyceumProcess(unpartitioned)
        #expect(plain.waitForExit() == 2)
        #expect(plain.standardError.contains("/p0: holds a partition of a partitioned cluster; set partitions"), "\(plain.standardError)")
        #expect(!FileManager.default.fileExists(atPath: cluster.root("w1") + "/progress/journal.jsonl"))

        // A partitioned worker beside an unpartitioned journal would leave its learners out.
        FileManager.default.createFile(atPath: cluster.root("w1") + "/books/journal.jsonl", contents: Data())
        let partitioned = try LyceumProcess(cluster.workerArguments("w1"))
        #expect(partitioned.waitForExit() == 2)
        #expect(partitioned.standardError.contains("books/journal.jsonl: is the journal of an unpartitioned deployment"), "\(partitioned.standardError)")
    }

    @Test func sessionsThatCannotAllBeOpenedAreRefusedBeforeStartingNamingTheSessionsThatFit() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        #expect(try LyceumProcess.run(["partitions", "init", "--data", data.path, "--partitions", "64", "--own", "0-63"]).status == 0)
        // 128 partition services and the node service at the default 16 sessions: 2,064 sockets.
        let worker = try LyceumProcess([
            "worker", "--broker", try freeLoopbackEndpoint(), "--partitions", "64", "--data", data.path, "--service", "books", "--service", "progress",
        ])
        #expect(worker.waitForExit() == 2)
        #expect(worker.standardError.contains("129 registrations (service instances, one per partition held, × brokers) × 16 sessions = 2064 sockets do not fit one process"), "\(worker.standardError)")
        #expect(worker.standardError.contains("use --sessions 7 or less"), "\(worker.standardError)")
    }

    @Test func aWorkerHoldingNoPartitionOfAServiceRefusesToStart() throws {
        let cluster = try Deployment.partitioned(owned: "0-3")
        try FileManager.default.removeItem(atPath: cluster.root("w1") + "/progress")
        let worker = try LyceumProcess(cluster.workerArguments("w1"))
        #expect(worker.waitForExit() == 2)
        #expect(worker.standardError.contains("holds no partition of progress"), "\(worker.standardError)")
    }

    @Test func theWorkersThreadsDoNotGrowWithThePartitionsItHoldsBeyondTheirJournals() throws {
        // One pool for every partition: only each journal's own threads come with a partition.
        // The logger's summary thread starts with the first burst of log lines, whatever the count.
        func threads(owned: String, registering services: [String]) throws -> [String] {
            let cluster = try Deployment.partitioned(owned: owned)
            try cluster.startWorker(registering: services)
            let tasks = "/proc/\(try cluster.process("w1").processIdentifier)/task"
            return try FileManager.default.contentsOfDirectory(atPath: tasks).map { task in
                try String(contentsOfFile: "\(tasks)/\(task)/comm", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            }.sorted()
        }
        let one = try threads(owned: "0", registering: ["books.p0", "progress.p0", NodeService.namePrefix + "w1"])
        let sixteen = try threads(owned: "0-7", registering: Deployment.servicesOfPartitions0to3 + (4...7).flatMap { ["books.p\($0)", "progress.p\($0)"] })
        let notJournals = { (names: [String]) in names.filter { !$0.hasPrefix("journal-") && $0 != "log-summaries" } }
        #expect(notJournals(sixteen) == notJournals(one), "2 partitions: \(one.count) threads \(one); 16 partitions: \(sixteen.count) threads \(sixteen)")
        #expect(!sixteen.contains { $0.hasPrefix("books.p") || $0.hasPrefix("progress.p") }, "\(sixteen)")
    }

    /// The node service's `held` list.
    static func describe(_ cluster: Deployment) throws -> [[String: String]] {
        let reply = try cluster.call(NodeService.namePrefix + "w1", #"{"op":"describe"}"#)
        try #require(reply.isOK, "\(reply)")
        let held = try #require(reply.result["held"] as? [[String: Any]])
        return held.map { $0.mapValues { "\($0)" } }
    }
}
