import Foundation
import Testing

extension Target {
    /// Issue 14's invariants after any abuse: the same process still runs (and the broker's
    /// worker), ordinary requests are answered within 2 s, VmRSS (now and at the attack's sampled
    /// peak) stays within `allowanceMiB` of the baseline, and every write acknowledged during the
    /// attack reads back. Prints the figures, which the report quotes.
    func expectSurvived(_ name: String, _ findings: Findings, allowanceMiB: Int = 256) throws {
        try #require(process.isRunning, "\(name): lyceum died (exit \(process.waitForExit(timeout: .seconds(1)).map(String.init) ?? "?")); attacker:\n\(findings.transcript)\nlog tail:\n\(String(decoding: log().suffix(2000), as: UTF8.self))")
        if let worker { #expect(worker.isRunning, "\(name): the worker died") }
        let slowest = try ordinaryRequests()
        let now = residentKiB() ?? 0
        let peak = max(now, findings.peakKiB)
        let limit = baselineKiB + allowanceMiB * 1024
        print("abuse \(name): baseline RSS \(baselineKiB / 1024) MiB, peak \(peak / 1024) MiB, after \(now / 1024) MiB; slowest ordinary request after: \(slowest); findings: \(findings.values.filter { $0.key != "acknowledged" })")
        #expect(peak <= limit, "\(name): VmRSS peaked at \(peak / 1024) MiB, over baseline \(baselineKiB / 1024) MiB + \(allowanceMiB) MiB")
        var unreadable: [String] = []
        for write in findings.acknowledged {
            let read = try? call("books", #"{"op":"get","learner":"\#(write.learner)","id":"\#(write.id)"}"#)
            let book = (read?.reply["result"] as? [String: Any])?["book"] as? [String: Any]
            if book?["title"] as? String != write.title { unreadable.append(write.id) }
        }
        #expect(unreadable.isEmpty, "\(name): \(unreadable.count) of \(findings.acknowledged.count) acknowledged writes do not read back: \(unreadable.prefix(5))")
        #expect(!findings.acknowledged.isEmpty, "\(name): no write was acknowledged during the attack")
    }
}
