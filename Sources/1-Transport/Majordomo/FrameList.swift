#if canImport(Glibc)
import Glibc
#endif
import ZeroMQ

/// Frames an MDP command is checked and read from in place, without copying them: byte arrays
/// (`ArraySlice<[UInt8]>`), or the messages a ``ReceiveBuffer`` received into. The codecs'
/// rules are written once, against this protocol, and serve both.
protocol FrameList {
    /// The index after the last frame.
    var endIndex: Int { get }

    /// Calls `body` with the bytes of frame `index`, valid only during the call.
    func withFrameBytes<Result>(_ index: Int, _ body: (UnsafeRawBufferPointer) -> Result) -> Result
}

extension FrameList {
    /// Whether frame `index` has no bytes.
    func frameIsEmpty(_ index: Int) -> Bool {
        withFrameBytes(index) { $0.isEmpty }
    }

    /// Whether frame `index` holds exactly `bytes`.
    func frame(_ index: Int, equals bytes: [UInt8]) -> Bool {
        withFrameBytes(index) { frame in
            // Sizes first, then one `memcmp`: the generic element-by-element comparison cost a
            // broker about 900 instructions per round trip (headers, client addresses).
            guard frame.count == bytes.count else { return false }
            guard let start = frame.baseAddress, !frame.isEmpty else { return true }
            return bytes.withUnsafeBytes { memcmp(start, $0.baseAddress!, frame.count) == 0 }
        }
    }

    /// Frame `index`'s one byte, or `nil` when it has not exactly one.
    func singleByte(_ index: Int) -> UInt8? {
        withFrameBytes(index) { $0.count == 1 ? $0[0] : nil }
    }

    /// A copy of frame `index`.
    func bytes(_ index: Int) -> [UInt8] {
        withFrameBytes(index) { Array($0) }
    }

    /// Copies of the frames from `start` to the end.
    func bytes(from start: Int) -> [[UInt8]] {
        (start..<endIndex).map(bytes)
    }
}

extension ArraySlice<[UInt8]>: FrameList {
    func withFrameBytes<Result>(_ index: Int, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        self[index].withUnsafeBytes(body)
    }
}
