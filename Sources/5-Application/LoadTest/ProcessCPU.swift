import Foundation

/// CPU time (user + system) of one process, from `/proc/PID/stat`: what `lyceum bench
/// --server-pid` divides by the measured requests, so that the server's cost per request shows
/// apart from the load generator's when both share the machine.
public struct ProcessCPU: Sendable, Equatable {
    /// The process.
    public let pid: Int32
    /// CPU time, user plus system, at clock-tick resolution (10 ms on Linux).
    public let time: Duration

    /// A process's CPU time as already known.
    public init(pid: Int32, time: Duration) {
        self.pid = pid
        self.time = time
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
        return ProcessCPU(pid: pid, time: time)
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

    /// The CPU time used between `earlier`, a reading of the same process, and this reading.
    func used(since earlier: ProcessCPU) -> ProcessCPU {
        ProcessCPU(pid: pid, time: time - earlier.time)
    }
}
