// The journal's benchmarks; Benchmarks/journal-bench.sh runs them all and compares with Redis.
// Usage:
//   journal-bench append POLICY WRITERS SECONDS DIR   appends/s of ~200-byte books from WRITERS threads,
//                                                     and appends per sync
//   journal-bench acknowledge POLICY IN_FLIGHT SECONDS DIR
//                                                     the same from one thread that keeps IN_FLIGHT
//                                                     appends waiting for `whenDurable` callbacks
//   journal-bench generate DIR COUNT                  writes a COUNT-record journal of ~200-byte books
//   journal-bench redis-aof FILE COUNT                writes the same books as a Redis AOF of SETs
//   journal-bench replay DIR                          replays DIR with progress; prints time and memory
import Foundation
import Journal
import LyceumSupport

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("journal-bench: \(message)\n".utf8))
    exit(2)
}

/// Book `number` as its service would store it: about 200 bytes of compact JSON.
func book(_ number: Int) -> (key: String, value: [UInt8]) {
    let id = String(number).leftPadded(to: 7)
    let key = "book-\(id)"
    let value = #"{"id":"\#(key)","title":"The Collected Works, Volume \#(id)","author":"Author \#(id)","year":1987,"pages":412,"isbn":"978-0-00-\#(id)-0","tags":["fiction","classic"],"language":"en"}"#
    return (key, Array(value.utf8))
}

extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}


/// The resident set size of this process, in bytes, from /proc/self/status.
func residentBytes() -> UInt64 {
    let status: String
    do { status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8) } catch { fail("cannot read /proc/self/status: \(error)") }
    guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
          let kilobytes = UInt64(line.split(separator: " ")[1]) else { fail("no VmRSS in /proc/self/status") }
    return kilobytes * 1024
}

/// The caller's state behind a pthread mutex: with many more writer threads than cores it sleeps
/// waiting threads at once, where Synchronization's Mutex spins first and wastes the cores.
final class LockedState: @unchecked Sendable {
    // `lock` guards `state`.
    private let lock = NSLock()
    private var state: KeyedJournalState

    init(_ state: KeyedJournalState) { self.state = state }

    func withLock<Result>(_ body: (inout KeyedJournalState) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }

    /// Appends book number `number` as a server's write does: append and apply under the state's
    /// lock, so that the journal's order is the state's; durability is the caller's to wait for.
    func appendBook(_ number: Int, to journal: Journal) throws -> PendingWrite {
        let (key, value) = book(number)
        let change = JournalChange.put("books", key: key, value: value)
        return try withLock { state in
            let pending = try journal.append([change])
            state.apply(change)
            return pending
        }
    }
}

/// Prints what the append runs report: appends per second, and appends per sync (how well group
/// commit worked; syncs by compaction and `close()` are not counted).
func printRate(_ statistics: JournalStatistics, _ elapsed: Double) {
    print(String(format: "%.0f %.1f", Double(statistics.appends) / elapsed, Double(statistics.appends) / Double(max(statistics.syncs, 1))))
}

func openJournal(_ directory: String, _ options: JournalOptions) -> (Journal, KeyedJournalState) {
    var state = KeyedJournalState()
    do { return (try Journal.open(directory: directory, options: options, state: &state), state) } catch { fail("\(error)") }
}

let arguments = CommandLine.arguments
switch arguments.dropFirst().first {
case "append":
    guard arguments.count == 6, let policy = DurabilityPolicy(arguments[2]), let writers = Int(arguments[3]),
          let duration = Double(arguments[4]) else { fail("usage: journal-bench append POLICY WRITERS SECONDS DIR") }
    let (journal, initial) = openJournal(arguments[5], JournalOptions(durability: policy))
    let state = LockedState(initial)
    let deadline = ContinuousClock.now + .milliseconds(Int(duration * 1000))
    let done = DispatchGroup()
    let start = ContinuousClock.now
    for writer in 0..<writers {
        done.enter()
        Thread {
            defer { done.leave() }
            var number = writer
            while ContinuousClock.now < deadline {
                do {
                    _ = try state.appendBook(number, to: journal).waitUntilDurable()
                } catch {
                    fail("\(error)")
                }
                number += writers
            }
        }.start()
    }
    done.wait()
    let elapsed = (ContinuousClock.now - start).seconds
    let statistics = journal.statistics
    journal.close()
    printRate(statistics, elapsed)

case "acknowledge":
    guard arguments.count == 6, let policy = DurabilityPolicy(arguments[2]), let inFlight = Int(arguments[3]), inFlight > 0,
          let duration = Double(arguments[4]) else { fail("usage: journal-bench acknowledge POLICY IN_FLIGHT SECONDS DIR") }
    let (journal, initial) = openJournal(arguments[5], JournalOptions(durability: policy))
    let state = LockedState(initial)
    // A slot per write in flight, given back by its acknowledgement: a server with this many
    // requests outstanding, none of them holding a thread.
    let slots = DispatchSemaphore(value: inFlight)
    let deadline = ContinuousClock.now + .milliseconds(Int(duration * 1000))
    let start = ContinuousClock.now
    var number = 0
    while ContinuousClock.now < deadline {
        slots.wait()
        do {
            try state.appendBook(number, to: journal).whenDurable { _ in slots.signal() }
        } catch {
            fail("\(error)")
        }
        number += 1
    }
    for _ in 0..<inFlight { slots.wait() }
    // Every write is acknowledged; hand the slots back, as libdispatch traps when a semaphore is
    // freed below its initial value.
    for _ in 0..<inFlight { slots.signal() }
    let elapsed = (ContinuousClock.now - start).seconds
    let statistics = journal.statistics
    journal.close()
    printRate(statistics, elapsed)

case "generate":
    guard arguments.count == 4, let count = Int(arguments[3]) else { fail("usage: journal-bench generate DIR COUNT") }
    let (journal, _) = openJournal(arguments[2], JournalOptions(durability: .none, compactionMinimumBytes: .max))
    for number in 0..<count {
        if number % (count / 10 + 1) == 0 {
            FileHandle.standardError.write(Data("generate: \(number * 100 / count)% (\(number) of \(count) records)\n".utf8))
        }
        let (key, value) = book(number)
        do { _ = try journal.append([.put("books", key: key, value: value)]).waitUntilDurable() } catch { fail("\(error)") }
    }
    journal.close()

case "redis-aof":
    guard arguments.count == 4, let count = Int(arguments[3]) else { fail("usage: journal-bench redis-aof FILE COUNT") }
    guard FileManager.default.createFile(atPath: arguments[2], contents: nil),
          let output = FileHandle(forWritingAtPath: arguments[2]) else { fail("cannot write \(arguments[2])") }
    var buffer: [UInt8] = []
    for number in 0..<count {
        let (key, value) = book(number)
        buffer += Array("*3\r\n$3\r\nSET\r\n$\(key.utf8.count)\r\n\(key)\r\n$\(value.count)\r\n".utf8) + value + [0x0D, 0x0A]
        if buffer.count > 1 << 20 {
            output.write(Data(buffer))
            buffer.removeAll(keepingCapacity: true)
        }
    }
    output.write(Data(buffer))
    output.closeFile()

case "replay":
    guard arguments.count == 3 else { fail("usage: journal-bench replay DIR") }
    let residentBefore = residentBytes()
    var lastPercent = -1
    var state = KeyedJournalState()
    let start = ContinuousClock.now
    let journal: Journal
    do {
        journal = try Journal.open(directory: arguments[2], options: JournalOptions(durability: .none), state: &state) { progress in
            let percent = Int(progress.fraction * 100)
            guard percent / 10 != lastPercent / 10 else { return }
            lastPercent = percent
            FileHandle.standardError.write(Data("replay: \(percent)% (\(progress.bytesDone) of \(progress.bytesTotal) bytes)\n".utf8))
        }
    } catch {
        fail("\(error)")
    }
    let elapsed = (ContinuousClock.now - start).seconds
    let resident = residentBytes()
    print("records=\(journal.lastSequence) live=\(state.liveCounts["books"] ?? 0) seconds=\(String(format: "%.3f", elapsed)) journal_bytes=\(journal.size) rss_bytes=\(resident) rss_before_bytes=\(residentBefore)")
    journal.close()

default:
    fail("usage: journal-bench append|generate|redis-aof|replay …")
}
