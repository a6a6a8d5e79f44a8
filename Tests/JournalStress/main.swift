// The child process the journal's crash tests kill. Usage:
//   journal-stress append DIR WRITERS   append forever from WRITERS threads with policy `always`;
//                                       print "SEQ KEY" for each acknowledged record
//   journal-stress acknowledge DIR IN_FLIGHT
//                                       append forever with policy `always` from one thread that
//                                       keeps IN_FLIGHT writes waiting for `whenDurable` callbacks;
//                                       print "SEQ KEY" from each callback
//   journal-stress compact DIR STEP     replay DIR, start two writers (printing "SEQ KEY" for each
//                                       acknowledged record), compact while they write, and SIGKILL
//                                       itself at STEP (one of CompactionStep's raw values)
//   journal-stress fill DIR BYTES       with RLIMIT_FSIZE at BYTES (SIGXFSZ ignored), append until a
//                                       write fails, print "acknowledged N" and "failed CODE ERRNO",
//                                       lift the limit, append 20 more, print "resumed SEQ"
import Foundation
import LyceumSupport
@_spi(Testing) import Journal

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("journal-stress: \(message)\n".utf8))
    exit(2)
}

/// Writes one whole line with a single write(2), so that a kill never leaves half a line reported.
func report(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    bytes.withUnsafeBytes { _ = write(1, $0.baseAddress, $0.count) }
}

let arguments = CommandLine.arguments
guard arguments.count == 4 else {
    fail("usage: journal-stress append DIR WRITERS | acknowledge DIR IN_FLIGHT | compact DIR STEP | fill DIR BYTES")
}
let directory = arguments[2]

switch arguments[1] {
case "append":
    guard let writers = Int(arguments[3]), writers > 0 else { fail("WRITERS must be a positive number") }
    var state = KeyedJournalState()
    let journal: Journal
    do { journal = try Journal.open(directory: directory, state: &state) } catch { fail("\(error)") }
    let run = getpid()
    for writer in 0..<writers {
        Thread {
            var counter = 0
            while true {
                let key = "p\(run)-w\(writer)-\(counter)"
                let value = Array(#"{"writer":\#(writer),"counter":\#(counter),"padding":"\#(String(repeating: "x", count: 64))"}"#.utf8)
                do {
                    let acknowledgement = try journal.append([.put("stress", key: key, value: value)]).waitUntilDurable()
                    report("\(acknowledgement.sequence) \(key)")
                } catch {
                    fail("\(error)")
                }
                counter += 1
            }
        }.start()
    }
    while true { sleep(60) }

case "acknowledge":
    guard let inFlight = Int(arguments[3]), inFlight > 0 else { fail("IN_FLIGHT must be a positive number") }
    var state = KeyedJournalState()
    let journal: Journal
    do { journal = try Journal.open(directory: directory, state: &state) } catch { fail("\(error)") }
    let run = getpid()
    // A slot is taken per append and given back by its acknowledgement, as a server with this
    // many requests in flight would.
    let slots = Monitor(inFlight)
    for counter in 0... {
        slots.wait(until: { $0 > 0 }) { free, _ in free -= 1 }
        let key = "p\(run)-a-\(counter)"
        let value = Array(#"{"counter":\#(counter),"padding":"\#(String(repeating: "x", count: 64))"}"#.utf8)
        do {
            try journal.append([.put("stress", key: key, value: value)]).whenDurable { acknowledgement in
                report("\(acknowledgement.sequence) \(key)")
                slots.update { $0 += 1 }
            }
        } catch {
            fail("\(error)")
        }
    }

case "compact":
    guard let step = CompactionStep(rawValue: arguments[3]) else { fail("unknown step \(arguments[3])") }
    var options = JournalOptions()
    options.compactionStepHook = { reached in
        if reached == step { kill(getpid(), SIGKILL) }
    }
    var replayed = KeyedJournalState()
    do {
        let journal = try Journal.open(directory: directory, options: options, state: &replayed)
        // A lock whose waiters sleep, as the journal asks of its callers' (`Journal`).
        let state = Monitor((current: replayed, acknowledged: 0))
        for writer in 0..<2 {
            Thread {
                for counter in 0... {
                    let change = JournalChange.put("during", key: "w\(writer)-\(counter)", value: Array(#"{"counter":\#(counter)}"#.utf8))
                    let pending = state.withLock { state in
                        do {
                            let pending = try journal.append([change])
                            state.current.apply(change)
                            return pending
                        } catch {
                            fail("\(error)")
                        }
                    }
                    do { report("\(try pending.waitUntilDurable().sequence) \(change.key)") } catch { fail("\(error)") }
                    state.update { $0.acknowledged += 1 }
                }
            }.start()
        }
        // Compact only once the writers are going, so that some records are acknowledged before
        // the snapshot and more arrive while it is written.
        guard state.wait(until: { $0.acknowledged >= 10 }, deadline: .now + .seconds(30)) else {
            fail("the writers were not acknowledged within 30 s")
        }
        try journal.compact { state.withLock { ($0.current, journal.lastSequence) } }
        fail("compaction finished without reaching step \(step)")
    } catch {
        fail("\(error)")
    }

case "fill":
    guard let bytes = UInt64(arguments[3]) else { fail("BYTES must be a number") }
    var state = KeyedJournalState()
    do {
        let journal = try Journal.open(directory: directory, state: &state)
        signal(SIGXFSZ, SIG_IGN)
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit)
        let unlimited = limit.rlim_max
        limit.rlim_cur = rlim_t(bytes)
        guard setrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit) == 0 else { fail("setrlimit failed") }
        let padding = String(repeating: "p", count: 1000)
        var acknowledged = 0
        while true {
            let change = JournalChange.put("books", key: "b\(acknowledged)", value: Array(#"{"padding":"\#(padding)"}"#.utf8))
            do {
                _ = try journal.append([change]).waitUntilDurable()
                acknowledged += 1
            } catch let error as JournalError {
                report("acknowledged \(acknowledged)")
                report("failed \(error.code) \(error.systemError ?? 0)")
                break
            }
        }
        limit.rlim_cur = unlimited
        guard setrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit) == 0 else { fail("setrlimit failed") }
        for number in 0..<20 {
            _ = try journal.append([.put("books", key: "later\(number)", value: Array("{}".utf8))]).waitUntilDurable()
        }
        report("resumed \(journal.lastSequence)")
        journal.close()
    } catch {
        fail("\(error)")
    }

default:
    fail("unknown mode \(arguments[1])")
}
