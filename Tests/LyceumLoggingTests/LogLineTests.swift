import Foundation
@testable import LyceumLogging
import Testing

@Suite("Log line formats")
struct LogLineTests {
    func line(_ format: LogFormat, message: String = "worker registered", fields: KeyValuePairs<String, String>) -> String {
        var line = LogLine(format: format)
        line.append(level: .warning, component: "broker", message: message, fields: fields)
        return String(decoding: line.bytes, as: UTF8.self)
    }

    @Test("JSON lines parse and keep every field, escapes included")
    func json() throws {
        let text = line(.json, message: "tab\there \"quoted\" \u{1}", fields: ["service": "books", "endpoint": "tcp://127.0.0.1:5555"])
        #expect(text.hasSuffix("}\n"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: String])
        #expect(object["level"] == "warning")
        #expect(object["component"] == "broker")
        #expect(object["msg"] == "tab\there \"quoted\" \u{1}")
        #expect(object["service"] == "books")
        #expect(object["endpoint"] == "tcp://127.0.0.1:5555")
        #expect(object["ts"]?.count == "2026-11-30T16:04:05.123Z".count)
    }

    @Test("logfmt quotes only values that need it")
    func logfmt() {
        let text = line(.logfmt, fields: ["service": "books", "error": "no space left"])
        #expect(text.contains(" level=warning component=broker msg=\"worker registered\" service=books error=\"no space left\"\n"))
        #expect(text.hasPrefix("ts=2"))
    }

    @Test("Human lines read left to right")
    func human() {
        let text = line(.human, fields: ["service": "books"])
        #expect(text.contains(" WARNING  broker: worker registered service=books\n"))
    }

    @Test("Levels parse from configuration names and order by severity")
    func levels() {
        #expect(LogLevel(name: "WARNING") == .warning)
        #expect(LogLevel(name: "loud") == nil)
        #expect(LogLevel.debug < .info && .error < .critical)
    }

    @Test("Disabled levels never evaluate their message")
    func disabledLevelsAreFree() {
        Logger.configure(level: .error, format: .logfmt)
        defer { Logger.configure(level: .info, format: Logger.defaultFormat) }
        var evaluated = false
        func expensive() -> String { evaluated = true; return "expensive" }
        Logger(component: "test").debug(expensive())
        #expect(!evaluated)
        #expect(!Logger(component: "test").isEnabled(.warning))
    }
}

/// What the rate limit holds back: every level but critical, so that an error repeated in a loop
/// (issue 36: a replica refusing every append logged 340,703 error lines in one run) costs a few
/// lines a second and a count, while a process's last words are always written.
@Suite struct RateLimitTests {
    @Test func errorsAreLimitedAndCriticalLinesNever() {
        #expect(Logger.isRateLimited(.warning))
        #expect(Logger.isRateLimited(.error))
        #expect(!Logger.isRateLimited(.critical))
    }

    @Test func aLoopingErrorCostsASecondsWorthOfLinesAndIsCounted() {
        let limiter = LogRateLimiter()
        let admitted = (0..<10_000).filter { _ in
            limiter.admit(component: "replication", message: "could not record the epoch history", level: .error, now: 1_000_000_000, linesPerSecond: 10)
        }.count
        #expect(admitted == 10, "a burst of one second's worth")
        #expect(limiter.takeSuppressed().map(\.count) == [9_990])
    }
}
