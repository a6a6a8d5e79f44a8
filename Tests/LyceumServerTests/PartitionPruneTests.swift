import Foundation
import LyceumTestSupport
@testable import PartitionOperations
import Testing
@testable import LyceumServer

/// `lyceum partitions prune` on real directories: it removes the copies moves renamed away,
/// and nothing else.
@Suite struct PartitionPruneTests {
    /// A data directory holding partitions 0-3 of 8, with `copies` (name under `DATA/` →
    /// the manifest's service and partition) made as a move leaves them, each with a journal of
    /// 1,000 bytes.
    private static func dataDirectory(copies: [String: (service: String, partition: Int)]) throws -> TemporaryDirectory {
        let data = try TemporaryDirectory()
        #expect(try LyceumProcess.run(["partitions", "init", "--data", data.path, "--partitions", "8", "--own", "0-3"], timeout: .seconds(120)).status == 0)
        for (name, manifest) in copies {
            let directory = data.path + "/" + name
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
            try Data(#"{"service":"\#(manifest.service)","partition":\#(manifest.partition),"partitions":8}"#.utf8).write(to: URL(fileURLWithPath: directory + "/PARTITION"))
            try Data(repeating: 10, count: 1000).write(to: URL(fileURLWithPath: directory + "/journal.jsonl"))
        }
        return data
    }

    private static func entries(_ data: TemporaryDirectory, _ service: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: data.path + "/" + service)) ?? []).sorted()
    }

    @Test func removesOnlyMovedAwayCopiesOldEnoughPrintingWhatItFreed() throws {
        let recent = "p1.moved-to-w3-" + PartitionMover.stamp(Date())
        let data = try Self.dataDirectory(copies: [
            "books/p2.moved-to-w2-20200101T000000Z": ("books", 2),
            "books/\(recent)": ("books", 1),
            // Named as partition 3's copy, but its manifest says otherwise: not a moved-away copy.
            "progress/p3.moved-to-w2-20200101T000000Z": ("progress", 5),
        ])
        defer { data.remove() }
        // A link named like a copy, to a live partition: never followed, never removed.
        try FileManager.default.createSymbolicLink(atPath: data.path + "/books/p0.moved-to-w2-20200101T000000Z", withDestinationPath: data.path + "/books/p0")
        try FileManager.default.createDirectory(atPath: data.path + "/books/p3.incoming", withIntermediateDirectories: false)
        let manifestBytes = try FileManager.default.attributesOfItem(atPath: data.path + "/books/p2.moved-to-w2-20200101T000000Z/PARTITION")[.size] as! Int

        let dry = try LyceumProcess.run(["partitions", "prune", "--data", data.path, "--older-than", "1d", "--dry-run"], timeout: .seconds(120))
        #expect(dry.stdout.contains("would remove \(data.path)/books/p2.moved-to-w2-20200101T000000Z (books.p2 moved to w2, \(1000 + manifestBytes) bytes)"), "\(dry.stdout)")
        #expect(Self.entries(data, "books").contains("p2.moved-to-w2-20200101T000000Z"), "a dry run removes nothing")

        let pruned = try LyceumProcess.run(["partitions", "prune", "--data", data.path, "--older-than", "1d"], timeout: .seconds(120))

        #expect(pruned.status == 1, "kept a directory that is not a copy: \(pruned.stdout)\n\(pruned.stderr)")
        #expect(pruned.stdout.contains("removed \(data.path)/books/p2.moved-to-w2-20200101T000000Z (books.p2 moved to w2, \(1000 + manifestBytes) bytes)"), "\(pruned.stdout)")
        #expect(pruned.stdout.contains("removed 1 moved-away copy, \(1000 + manifestBytes) bytes freed"), "\(pruned.stdout)")
        #expect(pruned.stderr.contains("kept \(data.path)/progress/p3.moved-to-w2-20200101T000000Z: its manifest names partition 5 of progress"), "\(pruned.stderr)")
        #expect(pruned.stderr.contains("kept \(data.path)/books/p0.moved-to-w2-20200101T000000Z: is not a directory"), "\(pruned.stderr)")
        #expect(Self.entries(data, "books") == ["p0", "p0.moved-to-w2-20200101T000000Z", "p1", recent, "p2", "p3", "p3.incoming"].sorted())
        #expect(Self.entries(data, "progress") == ["p0", "p1", "p2", "p3", "p3.moved-to-w2-20200101T000000Z"])
        #expect(FileManager.default.fileExists(atPath: data.path + "/books/p0/PARTITION"), "the link's target is intact")

        // Without an age, the recent copy goes too.
        let all = try LyceumProcess.run(["partitions", "prune", "--data", data.path, "--service", "books"], timeout: .seconds(120))
        #expect(all.stdout.contains("removed \(data.path)/books/\(recent)") && all.stdout.contains("removed 1 moved-away copy"), "\(all.stdout)")
        #expect(!Self.entries(data, "books").contains(recent))
    }

    @Test(arguments: [["--older-than", "soon"], ["--older-than", "-1d"], ["--service", "catalog"], []])
    func badArgumentsAreRefusedAndChangeNothing(arguments: [String]) throws {
        let data = try Self.dataDirectory(copies: ["books/p2.moved-to-w2-20200101T000000Z": ("books", 2)])
        defer { data.remove() }
        let dataArguments = arguments.isEmpty ? [] : ["--data", data.path]
        let refused = try LyceumProcess.run(["partitions", "prune"] + dataArguments + arguments, timeout: .seconds(120))
        #expect(refused.status == 2, "\(refused.stdout)\n\(refused.stderr)")
        #expect(Self.entries(data, "books").contains("p2.moved-to-w2-20200101T000000Z"))
    }
}
