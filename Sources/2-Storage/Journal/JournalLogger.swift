import LyceumLogging

extension Logger {
    /// The journal's log lines.
    static let journal = Logger(component: "journal")
}
