import Configuration
import Foundation
import Journal
import LearningServices
import LyceumServer
import LyceumTestSupport
@testable import ServiceHosting
import Testing
import ZeroMQ

struct ServiceHostTests {
    @Test func writesAreReplayedWhenTheHostOpensAgain() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        var settings = Settings()
        settings.dataDirectory = data.path
        let created: [String: Any]
        do {
            let host = try ServiceHost(serving: ["books", "progress"], settings: settings.hosting)
            created = try parse(host.books.handle(Array(#"{"op":"create","learner":"ada","title":"Dune","author":"Frank Herbert","genre":"Fantasy","rating":5}"#.utf8)))
            host.close()
        }
        let host = try ServiceHost(serving: ["books"], settings: settings.hosting)
        defer { host.close() }
        let book = try #require(created.result["book"] as? [String: Any])
        let read = try parse(host.books.handle(Array(#"{"op":"get","learner":"ada","id":"\#(book["id"] as? String ?? "")"}"#.utf8)))
        #expect(read.result["book"] as? NSDictionary == book as NSDictionary)
    }

    /// A retried write and a write that changes nothing both wait for the journal's last record
    /// before replying; several may wait for the same record, again and again.
    @Test func retriedAndNoOpWritesWaitForTheLastRecordAndSucceed() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        var settings = Settings()
        settings.dataDirectory = data.path
        let host = try ServiceHost(serving: ["books", "progress"], settings: settings.hosting)
        defer { host.close() }
        let watch = Array(#"{"op":"mark_watched","learner":"ada","course":"swiftui-essentials","lesson":"state-and-binding"}"#.utf8)
        for _ in 0..<3 { #expect(try parse(host.service(named: "progress")?.handle(watch) ?? []).isOK) }
        let create = Array(#"{"op":"create","learner":"ada","title":"Dune","author":"Frank Herbert","genre":"Fantasy","rating":5,"request_id":"r-1"}"#.utf8)
        let first = host.books.handle(create)
        #expect(try parse(first).isOK)
        for _ in 0..<3 { #expect(host.books.handle(create) == first) }
    }

    @Test func automaticCompactionUnderConcurrentWritesKeepsEveryWrite() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        var settings = Settings()
        settings.dataDirectory = data.path
        let options = JournalOptions(durability: .none, compactionRatio: 2, compactionMinimumBytes: 16 << 10)
        let writers = 4
        let updatesPerWriter = 300
        let ids: [String]
        do {
            let host = try ServiceHost(serving: ["books"], settings: settings.hosting, journalOptions: options)
            ids = try (0..<writers).map { writer in
                let reply = try parse(host.books.handle(Array(
                    #"{"op":"create","learner":"w\#(writer)","title":"Book","author":"A","genre":"Poetry","rating":1}"#.utf8)))
                return try #require((reply.result["book"] as? [String: Any])?["id"] as? String)
            }
            let threads = ids.enumerated().map { writer, id in
                ThreadResult("writer-\(writer)") {
                    for round in 0..<updatesPerWriter {
                        let reply = host.books.handle(Array(
                            #"{"op":"update","learner":"w\#(writer)","id":"\#(id)","review":"round \#(round) of a long enough review to grow the journal quickly"}"#.utf8))
                        guard try parse(reply).isOK else { throw JournalError(.io, String(decoding: reply, as: UTF8.self)) }
                    }
                }
            }
            for thread in threads { try thread.value() }
            host.close()
        }
        // At least one compaction replaced the journal while the writers went on.
        var replayed = BooksState()
        let report = try Journal.check(directory: data.path + "/books", state: &replayed)
        #expect(report.isHealthy)
        #expect(report.snapshotSequence > 0)
        let host = try ServiceHost(serving: ["books"], settings: settings.hosting)
        defer { host.close() }
        for (writer, id) in ids.enumerated() {
            let book = try parse(host.books.handle(Array(#"{"op":"get","learner":"w\#(writer)","id":"\#(id)"}"#.utf8))).result["book"] as? [String: Any]
            #expect(book?["version"] as? Int == updatesPerWriter + 1)
            #expect(book?["review"] as? String == "round \(updatesPerWriter - 1) of a long enough review to grow the journal quickly")
        }
    }

    @Test func aSecondHostCannotOpenTheSameDataDirectory() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        var settings = Settings()
        settings.dataDirectory = data.path
        let host = try ServiceHost(serving: ["progress"], settings: settings.hosting)
        defer { host.close() }
        #expect { try ServiceHost(serving: ["progress"], settings: settings.hosting) } throws: { error in
            (error as? JournalError)?.code == .locked
        }
    }

    /// The catalog's search thread is the host's to run (issue 40), beside the services it
    /// serves: `serve` and `worker` list it before the broker or pool; a host without the catalog
    /// runs no such thread.
    @Test func aHostServingTheCatalogHasItsSearchThreadToRun() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        var settings = Settings()
        settings.dataDirectory = data.path
        let catalog = try ServiceHost(serving: ["catalog", "books"], settings: settings.hosting)
        defer { catalog.close() }
        #expect(catalog.components.map(\.name) == ["catalog-search"])
        settings.dataDirectory = data.path + "/books-only"
        let booksOnly = try ServiceHost(serving: ["books"], settings: settings.hosting)
        defer { booksOnly.close() }
        #expect(booksOnly.components.isEmpty)
        settings.dataDirectory = data.path + "/serve"
        settings.endpoints = [try freeLoopbackEndpoint()]
        settings.eventsEndpoint = "none"
        let served = try ServiceHost(serving: ServiceRegistry.standard.names, settings: settings.hosting)
        defer { served.close() }
        let names = try ServerProcesses.serveComponents(served, settings: settings, context: try Context()).map(\.name)
        #expect(names.suffix(2) == ["catalog-search", "broker"], "\(names)")
    }

    @Test func aBrokenCatalogFileIsRefusedWithItsPath() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        var settings = Settings()
        settings.dataDirectory = data.path
        settings.catalogPaths = [data.path + "/missing.json"]
        #expect { try ServiceHost(serving: ["catalog"], settings: settings.hosting) } throws: { error in
            "\(error)".contains("missing.json")
        }
    }
}

extension ServiceHost {
    /// The books service, for tests that open a host serving it.
    var books: any LearningService { service(named: "books")! }
}
