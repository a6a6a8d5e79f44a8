import Foundation
import JSON

/// Latency by percentile for one run: what a latency-percentile chart draws, and what the
/// JSON results keep so that runs can be drawn together later.
public struct PercentileCurve: Sendable, Equatable {
    /// The run's name in the legend.
    public let label: String
    /// (percentile 0–100, latency in microseconds), percentiles ascending, ending at 100 (the maximum).
    public let points: [(percentile: Double, microseconds: UInt64)]

    /// Samples `histogram` at percentiles spaced evenly on the chart's 1/(1 − p) scale, as far
    /// as the number of values supports, then the maximum.
    public init(label: String, histogram: LatencyHistogram) {
        self.label = label
        var points: [(Double, UInt64)] = []
        if histogram.count > 0 {
            let resolvable = 1.0 - 1.0 / Double(histogram.count)
            var step = 0
            while true {
                let percentile = 100 * (1 - pow(10, -Double(step) / 10))
                if percentile / 100 > resolvable || step > 60 { break }
                points.append((percentile, histogram.value(atPercentile: percentile)))
                step += 1
            }
            points.append((100, histogram.maximum))
        }
        self.points = points
    }

    /// Reads a file of `lyceum bench --json` output.
    /// - Throws: ``LoadTestError/Code/file`` when it cannot be read, is not JSON or holds no curve.
    public init(file path: String) throws(LoadTestError) {
        let bytes: [UInt8]
        do {
            bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw LoadTestError(code: .file, path: path, detail: "cannot read: \(error.localizedDescription)")
        }
        let json: JSONValue
        do {
            json = try JSONParser().parse(bytes)
        } catch {
            throw LoadTestError(code: .file, path: path, detail: "not JSON: \(error)")
        }
        try self.init(json: json, path: path)
    }

    /// Reads the `curve` member of `lyceum bench --json` output.
    /// - Throws: ``LoadTestError/Code/file`` saying what is missing.
    public init(json: JSONValue, path: String) throws(LoadTestError) {
        let curve = json["curve"] ?? json
        guard case .string(let label)? = curve["label"], case .array(let pairs)? = curve["points"] else {
            throw LoadTestError(code: .file, path: path, detail: "no curve with a label and points: is this `lyceum bench --json` output?")
        }
        var points: [(Double, UInt64)] = []
        for pair in pairs {
            guard case .array(let items) = pair, items.count == 2, let percentile = Self.double(items[0]),
                  case .integer(let micros) = items[1], micros >= 0 else {
                throw LoadTestError(code: .file, path: path, detail: "curve.points must be [percentile, microseconds] pairs")
            }
            points.append((percentile, UInt64(micros)))
        }
        self.label = label
        self.points = points
    }

    /// `{"label": …, "points": [[percentile, microseconds], …]}`.
    public var json: JSONValue {
        ["label": .string(label), "points": .array(points.map { [.double($0.percentile), .integer(Int($0.microseconds))] })]
    }

    /// Same label and the same points.
    public static func == (lhs: PercentileCurve, rhs: PercentileCurve) -> Bool {
        lhs.label == rhs.label && lhs.points.elementsEqual(rhs.points) { $0.percentile == $1.percentile && $0.microseconds == $1.microseconds }
    }

    private static func double(_ value: JSONValue) -> Double? {
        switch value {
        case .integer(let number): Double(number)
        case .double(let number): number
        default: nil
        }
    }
}
