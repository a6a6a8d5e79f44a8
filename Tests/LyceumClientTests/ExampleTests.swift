import Foundation
import LyceumTestSupport
import Testing

/// docs/clients.md's example (Examples/SwiftClientExample), built as an executable, run as written
/// against a real serve.
@Suite(.offTheCooperativePool) struct ExampleTests {
    @Test func readmeExampleRuns() async throws {
        try await withDataDirectory { data in
            let serve = try Deployment.serve(data: data)
            let example = try ChildProcess(productsDirectory.appendingPathComponent("SwiftClientExample"),
                                           [serve.endpoint, serve.eventsEndpoint, serve.snapshotEndpoint])
            defer { example.stop() }
            // Bounded: an example that waits forever for its event must fail the test, not hang the suite.
            #expect(example.waitForExit() == 0)
            let printed = example.lines.joined(separator: "\n")
            #expect(printed.contains("created Dune (version 1)"), "\(printed)")
            #expect(printed.contains("search: [\"SwiftUI Essentials\"]"), "\(printed)")
            #expect(printed.contains("% of swiftui-essentials"), "\(printed)")
            #expect(printed.contains("not found: "), "\(printed)")
            #expect(printed.contains("event: lesson_watched swiftui-essentials/state-and-binding"), "\(printed)")
        }
    }
}
