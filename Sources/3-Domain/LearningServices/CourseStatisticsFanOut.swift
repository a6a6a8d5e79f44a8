import Access
import JSON
import Progress

/// `progress` `course_stats` over a partitioned cluster: what the broker's coordinator asks
/// every partition (the internal op ``partialOp``, whose sums make the merged average exact)
/// and how their answers become the one reply an unpartitioned service would give. Pure: the
/// coordinator does the sending (protocol/partitions.md, "Operations across partitions").
public enum CourseStatisticsFanOut {
    /// The internal per-partition op: a course's learner counts and the sum of its quiz takers'
    /// best fractions, for callers that may perform trusted operations, like `course_stats`.
    public static let partialOp = "course_stats_partial"

    /// What the coordinator does with a request its router left (no top-level `learner`).
    public enum Plan: Equatable, Sendable {
        /// Ask every partition this `course_stats_partial` body, then ``merge(_:)`` the replies.
        case fanOut(partial: [UInt8])
        /// Hand the request to one partition unchanged: it answers exactly the error the
        /// unpartitioned service would (a missing or malformed `learner`, an unknown op).
        case forward
        /// Answer this reply at once (a malformed or refused `course_stats`).
        case reply([UInt8])
    }

    /// A course's figures, as a partition computed them or as merged.
    public struct Figures: Equatable, Sendable {
        /// The course id.
        public var course: String
        /// The counts and sums.
        public var statistics: ProgressRecords.CourseStatistics

        /// The figures of `course`.
        public init(course: String, statistics: ProgressRecords.CourseStatistics) {
            self.course = course
            self.statistics = statistics
        }

        /// The `course_stats` result: counts and the average best score.
        var json: JSONValue {
            [
                "course": .string(course), "learners_started": .integer(statistics.started),
                "learners_completed": .integer(statistics.completed), "quiz_takers": .integer(statistics.quizTakers),
                "average_score_percent": statistics.averageScorePercent.map(JSONValue.double) ?? .null,
            ]
        }

        /// The `course_stats_partial` result: the counts and the sum the average comes from.
        var partialJSON: JSONValue {
            [
                "course": .string(course), "learners_started": .integer(statistics.started),
                "learners_completed": .integer(statistics.completed), "quiz_takers": .integer(statistics.quizTakers),
                "best_fraction_sum": .double(statistics.bestFractionSum),
            ]
        }
    }

    /// The course a `course_stats` or ``partialOp`` request names, read and authorised in the
    /// order the contract fixes: the members first, then the caller's role.
    static func course(of request: inout Request, caller: Caller) throws(ServiceError) -> String {
        let course = try request.read { (reader) throws(JSONReadError) in try reader.id("course") }
        try caller.authorizeTrustedOperation(request.op)
        return course
    }

    /// What to do with `frame`, a `progress` request without a `learner`, from `caller`. A
    /// ``partialOp`` request is forwarded only for callers that may perform trusted operations,
    /// since the partition sees the coordinator's key, not the caller's.
    public static func plan(_ frame: [UInt8], caller: Caller) -> Plan {
        // Not swallowed: a frame that is not a request goes to a partition, whose service gives
        // the caller exactly the error an unpartitioned process would.
        guard var request = try? Request(frame) else { return .forward }
        do throws(ServiceError) {
            switch request.op {
            case "course_stats":
                try request.refuseRequestID()
                let course = try course(of: &request, caller: caller)
                let partial: JSONValue = ["op": .string(partialOp), "course": .string(course)]
                return .fanOut(partial: partial.serialized())
            case partialOp:
                try caller.authorizeTrustedOperation(request.op)
                return .forward
            default:
                return .forward
            }
        } catch {
            return .reply(Reply.failure(error.forContractVersion(request.version)))
        }
    }

    /// The `course_stats` reply from every partition's reply to the ``partialOp`` request: the
    /// first error reply when there is one (they all check the same course against the same
    /// catalog), else the figures summed.
    public static func merge(_ replies: [[UInt8]]) -> [UInt8] {
        var merged: Figures?
        for reply in replies {
            guard let figures = figures(of: reply) else { return reply }
            if merged == nil { merged = figures } else { merged?.statistics.add(figures.statistics) }
        }
        guard let merged else { return Reply.failure(ServiceError(.internal, "no partition answered course_stats")) }
        return Reply.success(merged.json)
    }

    /// The `unavailable` reply when `missing` partitions of `service` did not answer: the
    /// message names them and the error's `partitions` member lists them.
    public static func unavailable(service: String, missing: [Int], reason: String) -> [UInt8] {
        let list = missing.map(String.init).joined(separator: ", ")
        let error: JSONValue = [
            "code": .string(ServiceError.Code.unavailable.rawValue),
            "message": .string("\(service) partition\(missing.count == 1 ? "" : "s") \(list) did not answer: \(reason)"),
            "partitions": .array(missing.map(JSONValue.integer)),
        ]
        let reply: JSONValue = ["ok": .bool(false), "error": error]
        return reply.serialized()
    }

    /// The figures of a successful ``partialOp`` reply; `nil` for anything else.
    private static func figures(of reply: [UInt8]) -> Figures? {
        // Not swallowed: `merge` passes any reply that is not a partial's figures (a partition's
        // error) on to the caller unchanged.
        guard case .object(let object)? = try? JSONParser(maxBytes: 1 << 16, maxDepth: 4).parse(reply),
              case .bool(true)? = object["ok"], case .object(let result)? = object["result"],
              case .string(let course)? = result["course"], case .integer(let started)? = result["learners_started"],
              case .integer(let completed)? = result["learners_completed"], case .integer(let takers)? = result["quiz_takers"]
        else { return nil }
        var statistics = ProgressRecords.CourseStatistics()
        statistics.started = started
        statistics.completed = completed
        statistics.quizTakers = takers
        switch result["best_fraction_sum"] {
        case .double(let sum)?: statistics.bestFractionSum = sum
        case .integer(let sum)?: statistics.bestFractionSum = Double(sum)
        default: return nil
        }
        return Figures(course: course, statistics: statistics)
    }
}
