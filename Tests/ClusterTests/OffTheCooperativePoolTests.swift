import Foundation
import LyceumTestSupport
import Testing

/// The trait ClusterTests runs under: a synchronous test body runs on a thread of its own.
@Suite(.serialized, .offTheCooperativePool)
struct OffTheCooperativePoolTests {
    @Test func aSynchronousBodyRunsOnAThreadOfItsOwn() {
        #expect(ThreadPerJobExecutor.shared.runsTheCurrentThread)
    }
}
