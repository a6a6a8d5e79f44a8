import Foundation
import PartitionOperations
import LyceumTestSupport
import Majordomo
import Synchronization
import Testing
import ZeroMQ

/// Issue 40 against a real `lyceum serve`: the per-learner limits refuse a create with
/// `limit_exceeded`, change nothing, are counted in the metrics, and hold across a restart and
/// an offline compaction, whose replays give the same pages; and one learner paging a full
/// library without pause does not keep other clients from being answered.
@Suite(.serialized)
struct LibraryEndToEndTests {
    static func create(_ learner: String, _ index: Int, version: Int? = nil) -> String {
        let stated = version.map { #","v":\#($0)"# } ?? ""
        return #"{"op":"create","learner":"\#(learner)","title":"Book \#((index * 7919) % 1000) \#(index)","author":"Author \#(index % 13)","genre":"Kids","rating":\#(index % 5 + 1)\#(stated)}"#
    }

    /// Every id of `learner`'s library listed by `sort`, page by page.
    static func listed(_ server: Deployment, _ learner: String, sort: String, order: String = "asc") throws -> [String] {
        var ids: [String] = []
        var cursor: String?
        repeat {
            let cursorMember = try cursor.map { #","cursor":\#(try quoted($0))"# } ?? ""
            let reply = try server.call("books", #"{"op":"list","learner":"\#(learner)","sort":"\#(sort)","order":"\#(order)","limit":7\#(cursorMember)}"#)
            let result = try #require(reply["result"] as? [String: Any], "\(reply)")
            ids += (result["books"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            cursor = result["next_cursor"] as? String
        } while cursor != nil
        return ids
    }

    /// `text` as a JSON string.
    static func quoted(_ text: String) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: text, options: .fragmentsAllowed), as: UTF8.self)
    }

    static func errorCode(_ reply: [String: Any]) -> String? { (reply["error"] as? [String: Any])?["code"] as? String }

    @Test func aFullLibraryIsRefusedWithLimitExceededAcrossARestartAndACompaction() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let port = try freeLoopbackPorts(count: 1)
        let arguments = ["--max-books-per-learner", "40", "--max-library-bytes", "50000", "--metrics-port", String(port)]
        let server = try Deployment.serve(data: data.path, arguments: arguments)
        for index in 0..<40 { #expect(try server.call("books", Self.create("ada", index)).isOK) }
        let refused = try server.call("books", Self.create("ada", 40))
        #expect(Self.errorCode(refused) == "limit_exceeded", "\(refused)")
        let message = (refused["error"] as? [String: Any])?["message"] as? String ?? ""
        #expect(message.contains("max-books-per-learner 40"), "\(message)")
        // A client speaking contract version 2 never sees the new code.
        #expect(Self.errorCode(try server.call("books", Self.create("ada", 41, version: 2))) == "bad_request")
        // Another learner's library is not full.
        #expect(try server.call("books", Self.create("grace", 0)).isOK)
        // A review that would take the library past max-library-bytes is refused too, and the
        // book keeps what it had.
        let created = try Self.listed(server, "ada", sort: "created")
        let (first, second) = (created[0], created[1])
        let long = String(repeating: "👍🏽", count: 3_900)  // 31,200 bytes, within the review's own limits
        #expect(try server.call("books", #"{"op":"update","learner":"ada","id":"\#(first)","review":"\#(long)"}"#).isOK)
        let overBytes = try server.call("books", #"{"op":"update","learner":"ada","id":"\#(second)","review":"\#(long)"}"#)
        #expect(Self.errorCode(overBytes) == "limit_exceeded", "\(overBytes)")
        let bytesMessage = (overBytes["error"] as? [String: Any])?["message"] as? String ?? ""
        #expect(bytesMessage.contains("max-library-bytes 50000"), "\(bytesMessage)")
        let kept = try server.call("books", #"{"op":"get","learner":"ada","id":"\#(second)"}"#)
        #expect(((kept["result"] as? [String: Any])?["book"] as? [String: Any])?["version"] as? Int == 1, "\(kept)")

        let orders = try ["title", "author", "rating", "created"].map { try Self.listed(server, "ada", sort: $0, order: $0 == "rating" ? "desc" : "asc") }
        #expect(orders.allSatisfy { $0.count == 40 && Set($0).count == 40 })

        let metrics = try HTTPExchange.get("/metrics", port: port)
        let line = metrics.body.split(separator: "\n").first { $0.contains("lyceum_request_errors_total") && $0.contains(#"code="limit_exceeded""#) }
        #expect(line?.hasSuffix(" 3") == true, "the refusals counted as the service decided them: \(String(describing: line))")

        // A restart replays the journal into the same orders, and the library is still full.
        try server.restart()
        #expect(try ["title", "author", "rating", "created"].map { try Self.listed(server, "ada", sort: $0, order: $0 == "rating" ? "desc" : "asc") } == orders)
        #expect(Self.errorCode(try server.call("books", Self.create("ada", 42))) == "limit_exceeded")

        // So does a compaction.
        #expect(server.process.signal(SIGTERM) == 0)
        let compact = try LyceumProcess.run(["journal", "compact", "--data", data.path])
        #expect(compact.status == 0, "\(compact.stderr)")
        try server.restart()
        #expect(try ["title", "author", "rating", "created"].map { try Self.listed(server, "ada", sort: $0, order: $0 == "rating" ? "desc" : "asc") } == orders)
        #expect(Self.errorCode(try server.call("books", Self.create("ada", 43))) == "limit_exceeded")
        // Deleting a book makes room for one.
        #expect(try server.call("books", #"{"op":"delete","learner":"ada","id":"\#(first)"}"#).isOK)
        #expect(try server.call("books", Self.create("ada", 44)).isOK)
        #expect(Self.errorCode(try server.call("books", Self.create("ada", 45))) == "limit_exceeded")
    }

    @Test func theLimitsHoldAfterABackupIsRestoredAndALoweredLimitKeepsTheBooks() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let server = try Deployment.serve(data: data.path + "/d", arguments: ["--max-books-per-learner", "3"])
        for index in 0..<3 { #expect(try server.call("books", Self.create("ada", index)).isOK) }
        let backup = try LyceumProcess.run(["backup", "--to", data.path + "/backup", "--broker", server.endpoint], timeout: .seconds(120))
        #expect(backup.status == 0, "\(backup.stderr)")
        let restored = try LyceumProcess.run(["restore", "--from", data.path + "/backup", "--data", data.path + "/restored"])
        #expect(restored.status == 0, "\(restored.stderr)")
        // A restore into a server configured lower: the books stay, only growth is refused.
        let lower = try Deployment.serve(data: data.path + "/restored", arguments: ["--max-books-per-learner", "2"])
        let books = try Self.listed(lower, "ada", sort: "created")
        #expect(books.count == 3)
        #expect(Self.errorCode(try lower.call("books", Self.create("ada", 3))) == "limit_exceeded")
        #expect(try lower.call("books", #"{"op":"update","learner":"ada","id":"\#(books[0])","rating":1}"#).isOK)
        #expect(try lower.call("books", #"{"op":"delete","learner":"ada","id":"\#(books[0])"}"#).isOK)
        #expect(Self.errorCode(try lower.call("books", Self.create("ada", 4))) == "limit_exceeded", "2 books left, at the limit of 2")
    }

    @Test func aReplicatedPartitionsNewLeaderHoldsTheLimitItsOldLeaderReached() throws {
        // The limit is checked against the library the leader holds, which a follower's replica
        // has too: after a fail-over the new leader refuses what the old one refused.
        let cluster = try Deployment.replicated(workerArguments: ["--max-books-per-learner", "4"])
        for index in 0..<4 { #expect(try cluster.call(Self.create("ada", index)).isOK) }
        #expect(Self.errorCode(try cluster.call(Self.create("ada", 4))) == "limit_exceeded")
        let leader = try cluster.leader()
        #expect(try #require(cluster.workers[leader]).signal(SIGTERM) == 0)
        let next = try cluster.leader(excluding: [leader])
        var refused: String?
        _ = eventually {
            // While the set fails over a call may time out or find no leader: asked again.
            do { refused = Self.errorCode(try cluster.call(Self.create("ada", 5))) } catch { refused = nil }
            return refused != nil && refused != "unavailable"
        }
        #expect(refused == "limit_exceeded", "the new leader \(next) answered \(String(describing: refused))")
        let listed = try cluster.call(#"{"op":"list","learner":"ada","sort":"title"}"#)
        #expect((listed.result["books"] as? [Any])?.count == 4, "\(listed)")
    }

    @Test func aPartitionedWorkerRefusesPastItsLimitAndKeepsItAcrossARestart() throws {
        // The limits are the worker's settings too, held per partition instance, and rebuilt
        // from each partition's journal when the worker starts again.
        let cluster = try Deployment.partitioned(owned: "0-7")
        let services = (0...7).flatMap { ["books.p\($0)", "progress.p\($0)"] } + [NodeService.namePrefix + "w1"]
        try cluster.startWorker(registering: services, arguments: ["--max-books-per-learner", "3"])
        let learner = Deployment.learner(in: 5)
        for index in 0..<3 { #expect(try cluster.call("books", Self.create(learner, index)).isOK) }
        #expect(Self.errorCode(try cluster.call("books", Self.create(learner, 3))) == "limit_exceeded")
        #expect(try cluster.call("books", Self.create(Deployment.learner(in: 2), 0)).isOK)
        cluster.killWorker(SIGTERM)
        try cluster.startWorker(registering: services, arguments: ["--max-books-per-learner", "3"])
        #expect(Self.errorCode(try cluster.call("books", Self.create(learner, 4))) == "limit_exceeded")
        let listed = try cluster.call("books", #"{"op":"list","learner":"\#(learner)","sort":"title"}"#)
        #expect(((listed["result"] as? [String: Any])?["books"] as? [Any])?.count == 3, "\(listed)")
    }

    /// The hostile-peer case of issue 40: a learner key at its limit lists its library without
    /// pause on one connection while another client's small requests are answered. Prints both
    /// latency sets; bounds only hangs (no wall-clock assertion).
    @Test func oneLearnerPagingAFullLibraryDoesNotStallOthers() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let books = 20_000
        let server = try Deployment.serve(data: data.path, arguments: ["--max-books-per-learner", String(books), "--durability", "none"])
        let fill = try LyceumProcess.run([
            "bench", "--broker", server.endpoint, "--scenario", "book-create", "--learners", "1", "--seed", "40", "--requests", String(books),
            "--warmup", "0s", "--in-flight", "64",
        ])
        #expect(fill.status == 0, "\(fill.stderr.suffix(2000))")
        let heavy = "bench-40-0"
        #expect(Self.errorCode(try server.call("books", Self.create(heavy, 0))) == "limit_exceeded", "the library is full")

        func smallRequests(_ count: Int) throws -> [Duration] {
            let context = try Context()
            let client = Client(endpoint: server.endpoint, configuration: ClientConfiguration(timeout: .seconds(60), attempts: 1), context: context)
            defer { client.close() }
            return try (0..<count).map { index in
                let started = ContinuousClock.now
                let body = index % 2 == 0
                    ? #"{"op":"get_course","course":"swiftui-essentials"}"#
                    : #"{"op":"list","learner":"light","sort":"title","limit":5}"#
                let reply = try parse(try client.call(index % 2 == 0 ? "catalog" : "books", body: [Array(body.utf8)])[0])
                #expect(reply.isOK, "\(reply)")
                return ContinuousClock.now - started
            }
        }
        let alone = try smallRequests(400)

        let stop = Atomic(false)
        let lister = ThreadResult<Int>("lister") {
            let context = try Context()
            let client = Client(endpoint: server.endpoint, configuration: ClientConfiguration(timeout: .seconds(60), attempts: 1), context: context)
            defer { client.close() }
            var pages = 0
            var cursor: [UInt8]?
            while !stop.load(ordering: .relaxed) {
                var body = Array(#"{"op":"list","learner":"\#(heavy)","sort":"title","limit":100"#.utf8)
                if let cursor { body += Array(#","cursor":"#.utf8) + cursor }
                body.append(UInt8(ascii: "}"))
                let reply = try parse(try client.call("books", body: [body])[0])
                let result = try #require(reply["result"] as? [String: Any], "\(reply)")
                cursor = try (result["next_cursor"] as? String).map { Array(try Self.quoted($0).utf8) }
                pages += 1
            }
            return pages
        }
        let beside = try smallRequests(400)
        stop.store(true, ordering: .relaxed)
        let pages = try lister.value()
        #expect(pages > 0)

        func percentile(_ samples: [Duration], _ fraction: Double) -> String {
            let sorted = samples.sorted()
            let value = sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
            return String(format: "%.2f ms", Double(value.components.attoseconds) / 1e15 + Double(value.components.seconds) * 1000)
        }
        print("""
            issue 40: small requests alone p50 \(percentile(alone, 0.5)) p99 \(percentile(alone, 0.99)); \
            beside one learner paging \(books) books (\(pages) pages of 100 by title): p50 \(percentile(beside, 0.5)) p99 \(percentile(beside, 0.99))
            """)
    }
}
