import Foundation

/// The live progress of a run on standard error: one line rewritten every second on a
/// terminal, a plain line every `interval` otherwise (logs, CI).
final class ProgressLine {
    /// Time between plain progress lines when `--progress` is not given.
    static let defaultInterval: Duration = .seconds(5)

    private let onTerminal = isatty(STDERR_FILENO) == 1
    private let interval: Duration
    private var lastShown: Duration = .zero

    /// A progress line every `interval` when standard error is not a terminal.
    init(interval: Duration) {
        self.interval = onTerminal ? .seconds(1) : interval
    }

    /// Shows `progress` if a line is due.
    func show(_ progress: LoadTestRunner.Progress) {
        guard progress.elapsed - lastShown >= interval else { return }
        lastShown = progress.elapsed
        let phase = progress.measuring ? "" : " (warm-up)"
        let text = String(format: "%6.1fs", progress.elapsed.seconds) + phase
            + String(format: "  %9.0f req/s  %d replies  %d errors  p99 %.3f ms", progress.recentRate, progress.replies,
                     progress.errors, Double(progress.p99) / 1000)
        FileHandle.standardError.write(Data((onTerminal ? "\r\u{1B}[K" + text : text + "\n").utf8))
    }

    /// Clears the rewritten line, so the summary starts on a clean one.
    func finish() {
        if onTerminal { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }
}
