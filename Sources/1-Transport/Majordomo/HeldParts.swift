import ZeroMQ

/// The body frames of the PARTIALs an 18/MDP worker sent for a 7/MDP client, which takes one
/// reply: kept by the broker until the FINAL, whose frames they then lead, within a bound in
/// frames and bytes so that a worker streaming without end cannot grow the broker's memory.
struct HeldParts {
    /// How far the worker's reply has gone.
    enum Progress {
        /// No PARTIAL yet.
        case none
        /// A PARTIAL went to the client, or is held for it: the request was handled, and a
        /// DISCONNECT does not give it back to the queue.
        case partsOut
        /// The client was answered already (its held parts went past the bound): the rest of
        /// the worker's reply is dropped.
        case abandoned
    }

    /// How far the worker's reply to its request in hand has gone.
    var progress = Progress.none
    private var frames: [Message] = []
    private var bytes = 0

    /// Whether nothing is held.
    var isEmpty: Bool { frames.isEmpty }

    /// Holds `parts`, of `size` bytes, if the frames held then stay within `maxFrames` and
    /// `maxBytes`; else releases everything held and marks the reply ``Progress/abandoned``.
    /// - Returns: whether the parts are held.
    mutating func hold(_ parts: [Message], size: Int, maxFrames: Int, maxBytes: UInt64) -> Bool {
        guard frames.count + parts.count <= maxFrames, UInt64(bytes + size) <= maxBytes else {
            frames = []
            bytes = 0
            progress = .abandoned
            return false
        }
        frames += parts
        bytes += size
        progress = .partsOut
        return true
    }

    /// The frames held, oldest first, leaving none held and the progress back at ``Progress/none``.
    mutating func takeAll() -> [Message] {
        defer { self = HeldParts() }
        return frames
    }
}
