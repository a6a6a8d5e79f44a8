import Foundation

/// CPU time (user + system) of one process, from `/proc/PID/stat`, and the context switches of
/// its threads: what `lyceum bench --server-pid` divides by the measured requests, so that the
/// server's cost per request shows apart from the load generator's when both share the machine.
public struct ProcessCPU: Sendable, Equatable {
    /// The process.
    public let pid: Int32
    /// CPU time, user plus system, at clock-tick resolution (10 ms on Linux).
    public let time: Duration
    /// Context switches its threads made by blocking (waiting for a socket, a lock, a sync),
    /// summed over `/proc/PID/task/*/status`: a thread that exits takes its count with it.
    public let voluntarySwitches: Int
    /// Context switches its threads underwent when the scheduler preempted them.
    public let involuntarySwitches: Int
    /// Each thread's counts (voluntary, involuntary) by thread id, so that a difference between
    /// two readings counts every thread from its own earlier count: from totals instead, a
    /// thread that exits in between would take its whole history off the difference.
    let switchesByThread: [Int: [Int]]

    /// A process's CPU time and context switches as already known.
    public init(pid: Int32, time: Duration, voluntarySwitches: Int = 0, involuntarySwitches: Int = 0) {
        self.init(pid: pid, time: time, voluntarySwitches: voluntarySwitches, involuntarySwitches: involuntarySwitches, byThread: [:])
    }

    private init(pid: Int32, time: Duration, voluntarySwitches: Int, involuntarySwitches: Int, byThread: [Int: [Int]]) {
        self.pid = pid
        self.time = time
        self.voluntarySwitches = voluntarySwitches
        self.involuntarySwitches = involuntarySwitches
        switchesByThread = byThread
    }

    /// The CPU time `pid` has used so far.
    /// - Throws: ``LoadTestError/Code/file`` naming `/proc/PID/stat` when the process is gone
    ///   or its line cannot be read.
    public static func read(pid: Int32) throws(LoadTestError) -> ProcessCPU {
        let path = "/proc/\(pid)/stat"
        guard pid > 0, let line = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw LoadTestError(code: .file, path: path, detail: "no such process, or its CPU time cannot be read")
        }
        guard let time = parse(stat: line, ticksPerSecond: Int(sysconf(Int32(_SC_CLK_TCK)))) else {
            throw LoadTestError(code: .file, path: path, detail: "not a process status line")
        }
        // /proc/PID/status counts the main thread's switches only: every thread's are summed.
        let taskPath = "/proc/\(pid)/task"
        let tasks: [String]
        do {
            tasks = try FileManager.default.contentsOfDirectory(atPath: taskPath)
        } catch {
            throw LoadTestError(code: .file, path: taskPath, detail: "the process's threads cannot be listed: \(error.localizedDescription)")
        }
        var voluntary = 0, involuntary = 0
        var byThread: [Int: [Int]] = [:]
        for task in tasks {
            // A thread that ends between the listing and this reading has no status file any
            // more: it is left out, as one that ended before the listing would be.
            guard let thread = Int(task), let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8),
                  let switches = parse(switches: status) else { continue }
            voluntary += switches.voluntary
            involuntary += switches.involuntary
            byThread[thread] = [switches.voluntary, switches.involuntary]
        }
        return ProcessCPU(pid: pid, time: time, voluntarySwitches: voluntary, involuntarySwitches: involuntary, byThread: byThread)
    }

    /// `voluntary_ctxt_switches` and `nonvoluntary_ctxt_switches` of a `/proc/PID/task/TID/status`
    /// text; nil when either is missing.
    public static func parse(switches status: String) -> (voluntary: Int, involuntary: Int)? {
        var voluntary: Int?, involuntary: Int?
        for line in status.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2 else { continue }
            let value = Int(parts[1].trimmingCharacters(in: .whitespaces))
            switch parts[0] {
            case "voluntary_ctxt_switches": voluntary = value
            case "nonvoluntary_ctxt_switches": involuntary = value
            default: break
            }
        }
        guard let voluntary, let involuntary else { return nil }
        return (voluntary, involuntary)
    }

    /// utime + stime (fields 14 and 15) of a `/proc/PID/stat` line, counted in `ticksPerSecond`;
    /// nil when the line has no such fields.
    public static func parse(stat line: String, ticksPerSecond: Int) -> Duration? {
        // The command name, in parentheses, may hold spaces and parentheses itself: fields are
        // counted from its last closing parenthesis, after which field 3 (the state) comes.
        guard ticksPerSecond > 0, let close = line.lastIndex(of: ")") else { return nil }
        let fields = line[line.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Int64(fields[11]), let system = Int64(fields[12]), user >= 0, system >= 0 else { return nil }
        return .seconds(user + system) / ticksPerSecond
    }

    /// The CPU time used and the context switches made since `earlier`, a reading of the same
    /// process: per thread when both readings list their threads (a thread born since counts
    /// from zero, as does one whose id was reused; one that exited is not counted), else the
    /// totals' difference.
    func used(since earlier: ProcessCPU) -> ProcessCPU {
        guard !switchesByThread.isEmpty, !earlier.switchesByThread.isEmpty else {
            return ProcessCPU(pid: pid, time: time - earlier.time, voluntarySwitches: voluntarySwitches - earlier.voluntarySwitches,
                              involuntarySwitches: involuntarySwitches - earlier.involuntarySwitches)
        }
        var made = [0, 0]
        for (thread, counts) in switchesByThread {
            let before = earlier.switchesByThread[thread] ?? [0, 0]
            for kind in 0..<2 { made[kind] += counts[kind] >= before[kind] ? counts[kind] - before[kind] : counts[kind] }
        }
        return ProcessCPU(pid: pid, time: time - earlier.time, voluntarySwitches: made[0], involuntarySwitches: made[1])
    }
}
