import Testing
@testable import Partitions

@Suite struct PartitionRangesTests {
    @Test func rangesAndSinglePartitionsAreSortedWithoutRepeats() throws {
        let scheme = try PartitionScheme(count: 16)
        #expect(try scheme.partitions(inRanges: "0-5,9") == [0, 1, 2, 3, 4, 5, 9])
        #expect(try scheme.partitions(inRanges: "15,3-4,7") == [3, 4, 7, 15])
        #expect(try scheme.partitions(inRanges: "0-15") == Array(0..<16))
        #expect(try scheme.partitions(inRanges: "2-2") == [2])
    }

    @Test(arguments: [
        ("", "empty"), ("a", "not a partition"), ("1,,2", "not a partition"), ("1-", "not a partition"), ("-1", "not a partition"),
        ("16", "outside 0-15"), ("3-16", "outside 0-15"), ("5-4", "runs backwards"), ("1,0-2", "named twice"), (" 1", "not a partition"),
        ("+1", "not a partition"), ("99999999999999999999", "not a partition"), ("1-2-3", "not a partition"),
    ])
    func badListsAreRefusedNamingTheItem(text: String, expected: String) throws {
        let scheme = try PartitionScheme(count: 16)
        #expect {
            try scheme.partitions(inRanges: text)
        } throws: { error in
            (error as? PartitionError)?.message.contains(expected) == true
        }
    }

    @Test func anOwnedPartitionAdmitsOnlyItsOwnLearners() throws {
        let scheme = try PartitionScheme(count: 16)
        let ada = try OwnedPartition(11, of: scheme)
        #expect(ada.refusal(ofLearner: "ada") == nil)
        let refusal = try #require(ada.refusal(ofLearner: "bob"))
        #expect(refusal.contains("partition 4 of 16") && refusal.contains("partition 11"))
        #expect(throws: PartitionError.self) { try OwnedPartition(16, of: scheme) }
        #expect(throws: PartitionError.self) { try OwnedPartition(-1, of: scheme) }
    }
}
