#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import ZeroMQ

/// Signals `lyceum watch` reacts to, recorded by handlers and read by the event loop, which
/// polls in short slices: a handler may run on any thread, including libzmq's.
enum WatchSignals {
    static let interrupted = Atomic<Bool>(false)
    static let resized = Atomic<Bool>(false)
    /// Made readable by the ending signals, so that a wait on sockets (a snapshot that never
    /// comes) ends at once; `nil` if no pipe could be opened, when waits end within their timeouts.
    static let wakeup = try? WakeupPipe()

    /// Installs the handlers: SIGINT, SIGTERM and SIGHUP (the terminal went away) end the loop,
    /// SIGWINCH asks for a redraw. Call it before anything starts a thread, so that every
    /// thread may take these signals.
    static func install() {
        // Opened here, not lazily inside a handler.
        _ = wakeup
        var ending = sigset_t()
        sigemptyset(&ending)
        for ender in [SIGINT, SIGTERM, SIGHUP] {
            signal(ender) { _ in
                WatchSignals.interrupted.store(true, ordering: .relaxed)
                // write(2) is async-signal-safe.
                WatchSignals.wakeup?.signal()
            }
            sigaddset(&ending, ender)
        }
        signal(SIGWINCH) { _ in WatchSignals.resized.store(true, ordering: .relaxed) }
        // `main` blocks these for a ComponentGroup to wait for; watch runs none, and a blocked
        // signal never reaches its handler: Ctrl-C was ignored, and a closed terminal left
        // watch running.
        pthread_sigmask(SIG_UNBLOCK, &ending, nil)
    }
}

/// The terminal while the dashboard owns it: alternate screen, hidden cursor, no echo of typed
/// keys. ``restore()`` puts everything back and must run before the process exits.
final class WatchTerminal {
    private var saved = termios()
    private var restored = false

    /// Takes over the terminal on standard output.
    init() {
        tcgetattr(STDIN_FILENO, &saved)
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO | ICANON)
        tcsetattr(STDIN_FILENO, TCSANOW, &quiet)
        write("\u{1B}[?1049h\u{1B}[?25l")
    }

    /// The terminal's size in columns and rows (80×24 when it cannot say).
    var size: (columns: Int, rows: Int) {
        var window = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &window) == 0, window.ws_col > 0, window.ws_row > 0 else { return (80, 24) }
        return (Int(window.ws_col), Int(window.ws_row))
    }

    /// Replaces the screen with `lines`, each cut to the width; one write, so no flicker.
    func draw(_ lines: [String]) {
        let (columns, rows) = size
        // No newline after the last row, which would scroll the screen by one.
        let body = lines.prefix(rows).map { String($0.prefix(columns)) + "\u{1B}[K" }.joined(separator: "\r\n")
        write("\u{1B}[H" + body + "\u{1B}[J")
    }

    /// Shows the cursor, leaves the alternate screen and restores echo; safe to call twice.
    func restore() {
        guard !restored else { return }
        restored = true
        write("\u{1B}[?25h\u{1B}[?1049l")
        tcsetattr(STDIN_FILENO, TCSANOW, &saved)
    }

    private func write(_ text: String) { writeStandardOutput(text) }
}

/// Writes all of `text` to standard output, unbuffered: the dashboard and the line modes both
/// flush whole batches with it, so output never mixes half lines.
func writeStandardOutput(_ text: String) {
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
        let written = bytes.withUnsafeBytes { Glibc.write(STDOUT_FILENO, $0.baseAddress, $0.count) }
        if written < 0 && errno == EINTR { continue }
        guard written > 0 else { return }
        bytes = bytes.dropFirst(written)
    }
}
