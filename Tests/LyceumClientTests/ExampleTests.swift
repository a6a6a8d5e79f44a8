import Foundation
import LyceumTestSupport
import Testing

/// The README's example (Examples/SwiftClientExample), built as an executable, run as written
/// against a real serve.
@Suite(.offTheCooperativePool) struct ExampleTests {
    @Test func readmeExampleRuns() async throws {
        try await withDataDirectory { data in
            let serve = try await ServeProcess(data: data)
            let example = Process()
            example.executableURL = productsDirectory.appendingPathComponent("SwiftClientExample")
            example.arguments = [serve.endpoint, serve.eventsEndpoint, serve.snapshotEndpoint]
            let output = Pipe()
            example.standardOutput = output
            try example.run()
            let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            example.waitUntilExit()
            #expect(example.terminationStatus == 0)
            #expect(printed.contains("created Dune (version 1)"), "\(printed)")
            #expect(printed.contains("search: [\"SwiftUI Essentials\"]"), "\(printed)")
            #expect(printed.contains("% of swiftui-essentials"), "\(printed)")
            #expect(printed.contains("not found: "), "\(printed)")
            #expect(printed.contains("event: lesson_watched swiftui-essentials/state-and-binding"), "\(printed)")
        }
    }
}
