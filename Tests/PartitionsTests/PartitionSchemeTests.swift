import Testing
@testable import Partitions

@Suite struct PartitionSchemeTests {
    /// The vectors protocol/partitions.md publishes, so that other clients can check theirs.
    @Test func publishedVectors() throws {
        #expect(PartitionScheme.hash(Array("ada".utf8)) == 0xe70b_c019_0530_e13b)
        #expect(PartitionScheme.hash(Array("bob".utf8)) == 0x004d_4419_134a_0a54)
        #expect(PartitionScheme.hash(Array("Zoë".utf8)) == 0x17a3_b76d_1a6f_5cbc)
        #expect(PartitionScheme.hash([UInt8]()) == 0xcbf2_9ce4_8422_2325)
        let sixteen = try PartitionScheme(count: 16), sixtyFour = try PartitionScheme(count: 64)
        #expect(sixteen.partition(ofLearner: "ada") == 11)
        #expect(sixtyFour.partition(ofLearner: "ada") == 59)
        #expect(sixtyFour.partition(ofLearner: "bob") == 20)
        #expect(sixtyFour.partition(ofLearner: "Zoë") == 60)
    }

    @Test func countsOutsideTheRangeAreRefused() {
        #expect(throws: PartitionError.self) { try PartitionScheme(count: 0) }
        #expect(throws: PartitionError.self) { try PartitionScheme(count: 4097) }
    }

    @Test func learnersSpreadOverEveryPartition() throws {
        let scheme = try PartitionScheme(count: 64)
        var sizes = [Int](repeating: 0, count: 64)
        for index in 0..<64_000 { sizes[scheme.partition(ofLearner: "learner-\(index)")] += 1 }
        // 1,000 expected per partition; FNV-1a keeps every one within a few standard deviations.
        #expect(sizes.min()! > 850 && sizes.max()! < 1150)
    }

    @Test func namesRoundTripAndHaveOneSpelling() {
        #expect(PartitionName.service("books", partition: 17) == "books.p17")
        #expect(PartitionName.parse(service: "books.p17")! == ("books", 17))
        #expect(PartitionName.parse(service: "a.b.p0")! == ("a.b", 0))
        for name in ["books", "books.p", "books.p017", "books.p-1", "books.q1", ".p1", "books.p+1"] {
            #expect(PartitionName.parse(service: name) == nil, "\(name)")
        }
        #expect(PartitionName.partition(ofDirectory: "p3") == 3)
        #expect(PartitionName.partition(ofDirectory: "p03") == nil)
    }
}
