import Foundation
import LyceumSupport
import Testing

@Suite struct AwaitedResultTests {
    struct Failure: Error, Equatable {}

    @Test func waitersOnOtherThreadsAllSeeTheFirstSettlement() async throws {
        let awaited = AwaitedResult<[String], Failure>()
        let settler = Thread { awaited.settle(.success(["tcp://127.0.0.1:1"])) }
        settler.start()
        for _ in 0..<3 {
            let result = awaited.wait(timeout: .seconds(30))
            #expect(try result?.get() == ["tcp://127.0.0.1:1"])
        }
        awaited.settle(.failure(Failure()))
        #expect(try awaited.wait(timeout: .zero)?.get() == ["tcp://127.0.0.1:1"])
    }

    @Test func aFailureIsReturnedAsSettled() {
        let awaited = AwaitedResult<Int, Failure>()
        awaited.settle(.failure(Failure()))
        #expect(throws: Failure()) { try awaited.wait(timeout: .seconds(30))?.get() }
    }

    @Test func anUnsettledResultIsNilAfterTheTimeout() {
        let awaited = AwaitedResult<Int, Failure>()
        #expect(awaited.wait(timeout: .milliseconds(20)) == nil)
    }
}
