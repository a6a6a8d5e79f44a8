import Foundation
import LyceumServer
import LyceumTestSupport
import Testing

/// `lyceum partitions init`: creates exactly the owned partitions' directories and manifests,
/// and refuses (exit 2, naming the path, creating nothing) whatever would give a partition two
/// homes or mix clusters.
@Suite struct PartitionsInitTests {
    /// Every file and directory under `root`, relative to it, sorted.
    private func tree(_ root: String) -> [String] {
        ((FileManager.default.subpaths(atPath: root)) ?? []).sorted()
    }

    @Test func createsExactlyTheOwnedPartitionsOfEachService() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let root = data.path + "/d"
        let result = try LyceumProcess.run(["partitions", "init", "--data", root, "--partitions", "8", "--own", "0-1,5"])
        #expect(result.status == 0, "\(result.stderr)")
        let expected = ["books", "progress"].flatMap { service in
            [service] + ["p0", "p1", "p5"].flatMap { ["\(service)/\($0)", "\(service)/\($0)/PARTITION"] }
        }.sorted()
        #expect(tree(root) == expected)
        let manifest = try String(contentsOfFile: root + "/books/p5/PARTITION", encoding: .utf8)
        #expect(manifest == #"{"service":"books","partition":5,"partitions":8}"# + "\n")
        #expect(result.stdout.split(separator: "\n").count == 6)

        let books = try LyceumProcess.run(["partitions", "init", "--data", root, "--partitions", "8", "--own", "2", "--service", "books"])
        #expect(books.status == 0, "\(books.stderr)")
        #expect(tree(root + "/books").contains("p2/PARTITION") && !tree(root + "/progress").contains("p2"))
    }

    /// A partition before its first write has no journal: `journal check` reports each one empty
    /// and exits 0, on the data directory and on one partition's directory alike; a path that is
    /// no journal's directory still fails.
    @Test func journalCheckOfFreshPartitionsReportsThemEmpty() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let root = data.path + "/d"
        #expect(try LyceumProcess.run(["partitions", "init", "--data", root, "--partitions", "4", "--own", "0-1"]).status == 0)
        let before = tree(root)
        let check = try LyceumProcess.run(["journal", "check", "--data", root])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        #expect(check.stdout.components(separatedBy: "status:         empty (no journal yet").count - 1 == 4, "\(check.stdout)")
        #expect(check.stdout.contains("== \(root)/progress/p1"), "\(check.stdout)")
        #expect(try LyceumProcess.run(["journal", "check", "--data", root + "/books/p0"]).status == 0)
        #expect(tree(root) == before, "check created nothing")
        let missing = try LyceumProcess.run(["journal", "check", "--data", root + "/nowhere"])
        #expect(missing.status == 1 && missing.stderr.contains("nowhere"), "\(missing.stderr)")
    }

    @Test(arguments: [
        (["--own", "1-2"], "/p1: already exists; a partition is created only once"),
        (["--own", "6,1", "--service", "books"], "books/p1: already exists"),
        (["--own", "7", "--partitions", "16"], "/p0/PARTITION: belongs to a cluster of 8 partitions, not 16"),
    ])
    func refusesAnythingThatExistsOrBelongsToAnotherCountAndCreatesNothing(arguments: [String], message: String) throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let root = data.path + "/d"
        #expect(try LyceumProcess.run(["partitions", "init", "--data", root, "--partitions", "8", "--own", "0-1"]).status == 0)
        let before = tree(root)
        var command = ["partitions", "init", "--data", root, "--partitions", "8"] + arguments
        if arguments.contains("--partitions") { command.removeSubrange(4...5) }
        let result = try LyceumProcess.run(command)
        #expect(result.status == 2)
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(tree(root) == before)
    }

    @Test(arguments: [
        (["--own", ""], "--own: the partition list is empty"),
        (["--own", "0-"], "--own: '0-' is not a partition"),
        (["--own", "3-1"], "--own: '3-1' runs backwards"),
        (["--own", "8"], "--own: partition 8 (in '8') is outside 0-7"),
        (["--own", "1,1"], "--own: partition 1 is named twice"),
        (["--own", "1", "--service", "catalog"], "--service: catalog keeps no journal and is not partitioned"),
        (["--own", "1", "--partitions", "0"], "--partitions: expected a partition count from 1 to 4096, got 0"),
        (["--own", "1", "--partitions", "5000"], "--partitions: expected 0 (unpartitioned) or a partition count from 1 to 4096, got '5000'"),
        (["--partitions", "8"], "--own"),
    ])
    func badCommandLinesExitTwoNamingTheFlagAndCreateNothing(arguments: [String], message: String) throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let root = data.path + "/d"
        let count = arguments.contains("--partitions") ? [] : ["--partitions", "8"]
        let result = try LyceumProcess.run(["partitions", "init", "--data", root] + count + arguments)
        #expect(result.status == 2)
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: root))
    }
}
