import LyceumTestSupport

/// Polls `condition` every 20 ms until it holds or `timeout` passes (LyceumTestSupport's
/// `eventually`, under the name these tests have always used).
func waitUntil(timeout: Duration, _ condition: () throws -> Bool) rethrows -> Bool {
    try eventually(timeout: timeout, condition)
}
