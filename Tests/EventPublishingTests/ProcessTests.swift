import EventSubscription
import LyceumTestSupport
import EventPublishing
import Foundation
import JSON
import Testing

@Suite("Processes: lyceum watch and an independent Python subscriber")
struct ProcessTests {
    static let lyceum = productsDirectory.appendingPathComponent("lyceum").path

    @Test("watch --json prints one parseable event per line, in sequence order")
    func watchJSON() throws {
        let fixture = try PublishingFixture()
        let watch = try ChildProcess(Self.lyceum, [
            "watch", "--json", "--connect", fixture.endpoints.publish[0], "--snapshot", fixture.endpoints.snapshot[0], "--limit", "25",
        ])
        // Events keep coming until the watcher has printed its 25 and left.
        var requests = fixture.requests(count: 20_000, learners: ["ada", "grace", "alan"])[...]
        _ = eventually {
            for request in requests.prefix(10) { fixture.write(request) }
            requests = requests.dropFirst(10)
            return !watch.isRunning
        }
        #expect(watch.waitForExit() == 0)
        let lines = watch.lines
        #expect(lines.count == 25)
        var previous: UInt64 = 0
        for line in lines {
            let event = try ReceivedProgressEvent(topic: "", body: Array(line.utf8))
            #expect(event.sequence > previous && event.source == fixture.publisher.source.description)
            previous = event.sequence
        }
    }

    @Test("watch prints plain lines when standard output is not a terminal")
    func watchPlainLines() throws {
        let fixture = try PublishingFixture()
        let watch = try ChildProcess(Self.lyceum, ["watch", "--connect", fixture.endpoints.publish[0], "--snapshot", fixture.endpoints.snapshot[0], "--limit", "5"])
        var requests = fixture.requests(count: 20_000, learners: ["ada"])[...]
        _ = eventually {
            for request in requests.prefix(10) { fixture.write(request) }
            requests = requests.dropFirst(10)
            return !watch.isRunning
        }
        #expect(watch.waitForExit() == 0)
        // A watcher that joins while events flow may also print a gap warning.
        let events = watch.lines.filter { !$0.hasPrefix("WARNING ") }
        #expect(events.count == 5)
        #expect(events.allSatisfy { $0.contains("learner=ada") && $0.contains(" seq=") })
        #expect(watch.lines.allSatisfy { !$0.contains("\u{1B}") })
    }

    @Test("watch refuses bad flags with status 2")
    func watchBadFlags() throws {
        for arguments in [["watch", "--limit", "0"], ["watch", "--json", "--plain"], ["watch", "--bogus"], ["watch", "--connect"]] {
            let watch = try ChildProcess(Self.lyceum, arguments)
            #expect(watch.waitForExit() == 2, "\(arguments)")
        }
    }

    @Test("the dashboard renders under a real terminal (tmux), follows resizes and restores the terminal on Ctrl-C")
    func dashboardUnderTmux() throws {
        guard FileManager.default.isExecutableFile(atPath: TmuxServer.executable) else {
            Issue.record("tmux is not installed: run `apt-get install -y tmux` (scripts/ensure-deps.sh test does)")
            return
        }
        let fixture = try PublishingFixture()
        let tmux = try TmuxServer()
        let log = tmux.directory.appendingPathComponent("watch.log")
        let status = tmux.directory.appendingPathComponent("watch.status")
        for request in fixture.requests(count: 200, learners: ["ada", "grace"]) { fixture.write(request) }
        // The shell records watch's exit status itself: tmux 3.3's server now and then leaves a
        // pane's exited process unreaped, and then never reports its status. The shell ignores
        // SIGINT, so that the Ctrl-C reaches watch (which installs its own handler) and not it.
        let command = "trap '' INT; \(Self.lyceum) watch --connect \(fixture.endpoints.publish[0]) --snapshot \(fixture.endpoints.snapshot[0]) "
            + "2>\(log.path); echo $? >\(status.path)"
        // remain-on-exit keeps the pane, and what the terminal last showed, after watch has left.
        try tmux.run(["new-session", "-d", "-s", "watch", "-x", "100", "-y", "30", command, ";", "set-option", "-t", "watch", "remain-on-exit", "on"])
        var requests = fixture.requests(count: 20_000, learners: ["ada", "grace"], seed: 5)[...]
        func writeSome() {
            for request in requests.prefix(3) { fixture.write(request) }
            requests = requests.dropFirst(3)
        }
        func screen() throws -> String { try tmux.run(["capture-pane", "-p", "-t", "watch"]) }
        /// No escape sequence, nor the remains of one whose ESC was eaten, reached the screen.
        func isClean(_ text: String) -> Bool {
            !text.contains("\u{1B}") && !text.contains("[?1049") && !text.contains("[K") && !text.contains("[7m") && !text.contains("[0m")
        }
        #expect(try eventually {
            writeSome()
            let text = try screen()
            return text.contains("RECENT EVENTS") && text.contains("learner=")
        })
        let wide = try screen()
        #expect(isClean(wide), "\(wide)")
        #expect(wide.contains("Lyceum watch") && wide.contains("COURSE") && wide.contains("STARTED"), "\(wide)")
        #expect(wide.split(separator: "\n").count <= 30)
        #expect(wide.split(separator: "\n").allSatisfy { $0.count <= 100 })

        try tmux.run(["resize-window", "-t", "watch", "-x", "60", "-y", "20"])
        #expect(try eventually {
            writeSome()
            let lines = try screen().split(separator: "\n", omittingEmptySubsequences: false)
            return lines.first?.hasPrefix("Lyceum watch") == true && lines.allSatisfy { $0.count <= 60 } && lines.count <= 21
        })
        let narrow = try screen()
        #expect(isClean(narrow), "\(narrow)")
        #expect(narrow.contains("RECENT EVENTS"), "\(narrow)")

        try tmux.run(["send-keys", "-t", "watch", "C-c"])
        var exitStatus = ""
        #expect(try eventually {
            guard FileManager.default.fileExists(atPath: status.path) else { return false }
            exitStatus = String(decoding: try Data(contentsOf: status), as: UTF8.self)
            return exitStatus.hasSuffix("\n")
        })
        let watchLog = String(decoding: try Data(contentsOf: log), as: UTF8.self)
        #expect(exitStatus == "0\n", "watch's exit status after Ctrl-C; its log: \(watchLog)")
        let after = try screen()
        #expect(!after.contains("RECENT EVENTS"), "the alternate screen was left: \(after)")
        #expect(isClean(after), "\(after)")
    }

    @Test("an independent Python subscriber decodes the events using only protocol/events.md")
    func pythonSubscriber() throws {
        guard pythonHasZMQ else {
            Issue.record("/usr/bin/python3 cannot import zmq: run `apt-get install -y python3-zmq` (scripts/ensure-deps.sh test does)")
            return
        }
        let fixture = try PublishingFixture()
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Subscribers/events_subscriber.py").path
        let events = fixture.requests(count: 400, learners: ["ada", "grace.h", "ada@x"]).compactMap { fixture.write($0) }.count
        let python = try ChildProcess("/usr/bin/python3", [script, fixture.endpoints.publish[0], fixture.endpoints.snapshot[0]])
        #expect(eventually { python.lines.first == "READY" })
        // These race the subscriber's snapshot request, as a live service's writes would.
        let more = fixture.requests(count: 1000, learners: (0..<20).map { "later-\($0)" }, seed: 3).compactMap { fixture.write($0) }.count
        let bookEvents = BookEventTests.lifecycle(learner: "ada/x", bookID: "b-1") + BookEventTests.lifecycle(learner: "ada", bookID: "b-2").prefix(2)
        for (index, event) in bookEvents.enumerated() { fixture.publisher.publish(event, on: .books, revision: UInt64(index + 1)) }
        python.send(line: "UNTIL \(fixture.publisher.sequence)")
        #expect(python.waitForExit() == 0)
        let report = try JSONParser().parse(Array(try #require(python.lines.last).utf8))
        #expect(report["problems"] == .array([]))
        #expect(report["last_seq"] == .integer(events + more + bookEvents.count))
        #expect(report["books"]?["books/ada%2Fx/b-1"] == .null)
        #expect(report["books"]?["books/ada/b-2"]?["title"] == "Dune Messiah" && report["books"]?["books/ada/b-2"]?["version"] == 2)
        guard case .object(let mirror) = report["mirror"] else { throw TestFailure("no mirror in \(report)") }
        let truth = try fixture.progressThroughTheService()
        #expect(mirror.count == truth.count)
        for member in mirror { #expect(try PublishedProgressFields(member.value) == truth[member.key], "\(member.key)") }
    }
}
