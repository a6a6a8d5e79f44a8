import Foundation
import Testing

extension Target {
    /// Issue 14's invariants after any abuse: the same process still runs (and the broker's
    /// worker), VmRSS (at the attack's sampled peak and now) stays within `allowanceMiB` of the
    /// baseline, ordinary requests are answered (the slowest is printed: a figure, not a bound),
    /// and every write acknowledged during the attack reads back. Prints the figures, which the
    /// report quotes.
    func expectSurvived(_ name: String, _ findings: Findings, allowanceMiB: Int = 256) throws {
        try #require(process.isRunning, "\(name): lyceum died (status \(process.exitStatus.map(String.init) ?? "?")); attacker:\n\(findings.transcript)\nthe end of its log:\n\(String(decoding: log().suffix(1500), as: UTF8.self))")
        if let worker { #expect(worker.isRunning, "\(name): the worker died") }
        let now = residentKiB() ?? 0
        let peak = max(now, findings.peakKiB)
        let limit = baselineKiB + allowanceMiB * 1024
        print("abuse \(name): baseline RSS \(baselineKiB / 1024) MiB, peak \(peak / 1024) MiB, after \(now / 1024) MiB; findings: \(findings.summary)")
        #expect(peak <= limit, "\(name): VmRSS peaked at \(peak / 1024) MiB, over baseline \(baselineKiB / 1024) MiB + \(allowanceMiB) MiB")
        do {
            let slowest = try ordinaryRequests()
            print("abuse \(name): slowest ordinary request afterwards \(slowest)")
        } catch {
            Issue.record("\(name): an ordinary request failed after the attack: \(error)")
        }
        // Stop after a few failures: a server that no longer answers would cost a hang limit per write.
        var unreadable: [String] = []
        for write in findings.acknowledged where unreadable.count < 3 {
            let read = try? call("books", #"{"op":"get","learner":"\#(write.learner)","id":"\#(write.id)"}"#)
            let book = (read?.reply["result"] as? [String: Any])?["book"] as? [String: Any]
            if book?["title"] as? String != write.title { unreadable.append(write.id) }
        }
        #expect(unreadable.isEmpty, "\(name): acknowledged writes that do not read back (checking stops at 3): \(unreadable), of \(findings.acknowledged.count)")
        #expect(!findings.acknowledged.isEmpty, "\(name): no write was acknowledged during the attack")
    }
}
