import Foundation
import LyceumTestSupport
import Testing

/// The seeded, time-boxed fuzzer (`Attackers/fuzz.py`) against `lyceum serve`, followed by the
/// abuse suite's invariants. A few seconds in the suite; `make fuzz SECONDS=600 SEED=42` runs it
/// longer (through ABUSE_FUZZ_SECONDS and ABUSE_FUZZ_SEED). The seed is printed, so a failure can
/// be replayed. In the serialized suite, so that it never runs beside an attack that measures.
extension HostilePeerTests {
    @Test("fuzz: random frames and mutated MDP and JSON requests leave the server serving")
    func fuzz() throws {
        let environment = ProcessInfo.processInfo.environment
        let seconds = environment["ABUSE_FUZZ_SECONDS"].flatMap(Int.init) ?? 4
        let seed = environment["ABUSE_FUZZ_SEED"].flatMap(Int.init) ?? Int.random(in: 1...999_999)
        print("fuzz seed \(seed), \(seconds) s (replay: make fuzz SECONDS=\(seconds) SEED=\(seed))")
        let target = try Target.serve()
        let findings = try Attacker.run("fuzz.py", against: target,
                                        ["--seconds", String(seconds), "--seed", String(seed), "--examples", Attacker.examples.path],
                                        limit: .seconds(seconds + 60))
        try target.expectSurvived("fuzz seed \(seed)", findings)
    }

    /// The fuzzer's mutated client messages alone, sent faster than the broker reads them, with
    /// connection churn: what a 45 s fuzz run needed to drive `serve` to 885 MiB, when libzmq
    /// held 1000 unread messages per peer, each keeping a receive buffer alive (`receive-hwm`).
    @Test("a client flooding mutated requests faster than the broker reads keeps serve's memory bounded")
    func clientFlood() throws {
        let target = try Target.serve()
        let findings = try Attacker.run("fuzz.py", against: target,
                                        ["--seconds", "8", "--seed", "7", "--only", "client", "--examples", Attacker.examples.path],
                                        limit: .seconds(70))
        try target.expectSurvived("client flood", findings, allowanceMiB: 128)
    }
}
