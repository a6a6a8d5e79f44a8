import Foundation

/// An SVG chart of latency by percentile for one or more runs, readable at a glance: the
/// x axis stretches the tail (90%, 99%, 99.9%, … equally spaced), the y axis is milliseconds.
public struct LatencyChart: Sendable {
    /// The runs, one line each, in legend order.
    public let curves: [PercentileCurve]
    /// The chart's heading.
    public let title: String

    /// A chart of `curves` headed `title`.
    public init(curves: [PercentileCurve], title: String = "Latency by percentile") {
        self.curves = curves
        self.title = title
    }

    private static let colors = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"]
    private static let width = 820.0, height = 480.0
    private static let left = 70.0, right = 210.0, top = 40.0, bottom = 50.0

    /// The chart as a standalone SVG document.
    public func svg() -> String {
        let nines = max(2, curves.flatMap(\.points).filter { $0.percentile < 100 }
            .map { Int((Self.tailPosition($0.percentile)).rounded(.up)) }.max() ?? 2)
        let highest = max(1, curves.flatMap(\.points).map(\.microseconds).max() ?? 1)
        let (ceiling, tick) = Self.scale(forMaximumMilliseconds: Double(highest) / 1000)
        let plotWidth = Self.width - Self.left - Self.right, plotHeight = Self.height - Self.top - Self.bottom
        func x(_ percentile: Double) -> Double { Self.left + plotWidth * min(Self.tailPosition(percentile), Double(nines)) / Double(nines) }
        func y(_ microseconds: UInt64) -> Double { Self.top + plotHeight * (1 - min(Double(microseconds) / 1000 / ceiling, 1)) }

        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(Self.width))" height="\(Int(Self.height))" viewBox="0 0 \(Int(Self.width)) \(Int(Self.height))" font-family="sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(Int(Self.left))" y="24" font-size="16" font-weight="bold">\(Self.escaped(title))</text>

            """
        var value = 0.0
        while value <= ceiling + tick / 2 {
            let position = Self.top + plotHeight * (1 - value / ceiling)
            svg += "<line x1=\"\(Self.format(Self.left))\" y1=\"\(Self.format(position))\" x2=\"\(Self.format(Self.left + plotWidth))\" y2=\"\(Self.format(position))\" stroke=\"#ddd\"/>\n"
            svg += "<text x=\"\(Self.format(Self.left - 6))\" y=\"\(Self.format(position + 4))\" text-anchor=\"end\">\(Self.format(value))</text>\n"
            value += tick
        }
        for nine in 0...nines {
            let position = Self.left + plotWidth * Double(nine) / Double(nines)
            let label = switch nine {
            case 0: "0%"
            case 1: "90%"
            case 2: "99%"
            default: "99." + String(repeating: "9", count: nine - 2) + "%"
            }
            svg += "<line x1=\"\(Self.format(position))\" y1=\"\(Self.format(Self.top))\" x2=\"\(Self.format(position))\" y2=\"\(Self.format(Self.top + plotHeight))\" stroke=\"#ddd\"/>\n"
            svg += "<text x=\"\(Self.format(position))\" y=\"\(Self.format(Self.top + plotHeight + 18))\" text-anchor=\"middle\">\(label)</text>\n"
        }
        svg += "<text x=\"\(Self.format(Self.left + plotWidth / 2))\" y=\"\(Self.format(Self.height - 10))\" text-anchor=\"middle\">percentile</text>\n"
        svg += "<text transform=\"translate(18 \(Self.format(Self.top + plotHeight / 2))) rotate(-90)\" text-anchor=\"middle\">latency (ms)</text>\n"
        svg += "<rect x=\"\(Self.format(Self.left))\" y=\"\(Self.format(Self.top))\" width=\"\(Self.format(plotWidth))\" height=\"\(Self.format(plotHeight))\" fill=\"none\" stroke=\"#444\"/>\n"
        for (index, curve) in curves.enumerated() {
            let color = Self.colors[index % Self.colors.count]
            let path = curve.points.map { "\(Self.format(x($0.percentile))),\(Self.format(y($0.microseconds)))" }.joined(separator: " ")
            svg += "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"2\" points=\"\(path)\"/>\n"
            let legendY = Self.top + 10 + Double(index) * 36
            let p99 = curve.points.first { $0.percentile >= 99 }?.microseconds ?? 0
            svg += "<line x1=\"\(Self.format(Self.width - Self.right + 14))\" y1=\"\(Self.format(legendY))\" x2=\"\(Self.format(Self.width - Self.right + 34))\" y2=\"\(Self.format(legendY))\" stroke=\"\(color)\" stroke-width=\"3\"/>\n"
            svg += "<text x=\"\(Self.format(Self.width - Self.right + 40))\" y=\"\(Self.format(legendY + 4))\">\(Self.escaped(curve.label))</text>\n"
            svg += "<text x=\"\(Self.format(Self.width - Self.right + 40))\" y=\"\(Self.format(legendY + 19))\" fill=\"#555\">p99 \(LoadTestResult.milliseconds(p99)) ms</text>\n"
        }
        return svg + "</svg>\n"
    }

    /// log10(1 / (1 − p)): 1 at 90%, 2 at 99%, 3 at 99.9%.
    static func tailPosition(_ percentile: Double) -> Double {
        let remaining = 1 - percentile / 100
        guard remaining > 1e-9 else { return 9 }
        return log10(1 / remaining)
    }

    /// A round axis ceiling and tick step for values up to `maximum` ms.
    static func scale(forMaximumMilliseconds maximum: Double) -> (ceiling: Double, tick: Double) {
        var step = 0.001
        while maximum / step > 8 {
            for factor in [2.0, 2.5, 2.0] where maximum / step > 8 { step *= factor }
        }
        return ((maximum / step).rounded(.up) * step, step)
    }

    static func format(_ value: Double) -> String {
        let rounded = (value * 1000).rounded() / 1000
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }

    static func escaped(_ text: String) -> String {
        var output = ""
        for character in text {
            switch character {
            case "&": output += "&amp;"
            case "<": output += "&lt;"
            case ">": output += "&gt;"
            case "\"": output += "&quot;"
            default: output.append(character)
            }
        }
        return output
    }
}
