import EventSubscription
import JSON
import Progress
import Testing
@testable import EventPublishing

/// The snapshot table follows the partitions a process holds: a partition's learners leave it
/// when the partition moves away and join it when one moves in, each learner's entries once.
@Suite struct SnapshotTableChangeTests {
    static func table(_ learners: [String], course: String = "swift") -> ProgressTable {
        var table = ProgressTable()
        for learner in learners {
            let progress = CourseProgress(learner: learner, course: course, startedAt: 1, updatedAt: 1)
            table.insert(ProgressEntry(learner: learner, course: course, revision: 0, summary: ProgressSummary(progress, lessonIDs: ["l1"])))
        }
        return table
    }

    static func learners(in state: inout SnapshotState) throws -> [String] {
        let request = try SnapshotRequest(frames: [Array(SnapshotProtocol.snapshotCommand.utf8), Array(EventTopic.progress.utf8)][...])
        let page = try JSONParser().parse(state.page(request, budget: 1 << 20, source: EventSource(description: "test")))
        guard case .array(let entries)? = page["entries"] else { return [] }
        return entries.compactMap { if case .string(let learner)? = $0["learner"] { learner } else { nil } }
    }

    @Test func learnersLeaveWithTheirPartitionAndComeBackOnce() throws {
        var state = SnapshotState(table: Self.table(["ada", "bob"]))
        state.apply(.removeLearners(["ada"]))
        #expect(try Self.learners(in: &state) == ["bob"])
        // Moved back in: its entries join again, and the page lists each learner once.
        state.apply(.add(Self.table(["ada", "cy"])))
        #expect(try Self.learners(in: &state) == ["ada", "bob", "cy"])
    }

    @Test func anAddedEntryNeverReplacesANewerOne() throws {
        var state = SnapshotState(table: ProgressTable())
        let progress = CourseProgress(learner: "ada", course: "swift", watched: ["l1"], startedAt: 1, updatedAt: 2)
        state.apply(ProgressEntry(learner: "ada", course: "swift", revision: 7, summary: ProgressSummary(progress, lessonIDs: ["l1"])), courseSequence: 1)
        state.apply(.add(Self.table(["ada"])))
        let request = try SnapshotRequest(frames: [Array(SnapshotProtocol.snapshotCommand.utf8), Array(EventTopic.progress.utf8)][...])
        let page = try JSONParser().parse(state.page(request, budget: 1 << 20, source: EventSource(description: "test")))
        guard case .array(let entries)? = page["entries"] else { Issue.record("no entries: \(page)"); return }
        #expect(entries.count == 1)
        #expect(entries.first?["revision"] == .integer(7))
    }
}
