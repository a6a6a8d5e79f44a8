/// Request bodies of `--body-bytes` bytes, each one distinct: its first bytes hold a sequence
/// number, so that a reply carrying another request's body, or a damaged one, is caught.
struct EchoBodies {
    private var template: [UInt8]
    private var sequence: UInt64 = 0

    init(bytes: Int) {
        template = [UInt8](repeating: 0x2A, count: bytes)
    }

    /// The next request's body: one frame.
    mutating func next() -> [[UInt8]] {
        sequence += 1
        var frame = template
        withUnsafeBytes(of: sequence.bigEndian) { number in
            let count = min(frame.count, number.count)
            frame.replaceSubrange(0..<count, with: number.suffix(count))
        }
        return [frame]
    }
}

/// Ends the run unless `reply` is exactly `request`: the benchmark counts only correct echoes.
func checkEcho(_ reply: [[UInt8]], of request: [[UInt8]], in name: String) {
    guard reply == request else {
        fail("\(name): a reply's body (\(reply.map(\.count)) bytes) differs from its request's (\(request.map(\.count)) bytes)")
    }
}
