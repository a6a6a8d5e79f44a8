/// How a stateful service's learners are spread over a fixed number of partitions, chosen when a
/// cluster is created: a learner's partition is the FNV-1a 64-bit hash of the UTF-8 bytes of
/// its id, modulo the count (protocol/partitions.md, with test vectors), so that any client can
/// compute it. Changing the count of an existing cluster would move almost every learner: it is
/// never done in place.
public struct PartitionScheme: Sendable, Hashable, CustomStringConvertible {
    /// The partition counts a cluster may have.
    public static let counts = 1...4096

    /// The number of partitions, numbered from 0.
    public let count: Int

    /// A scheme of `count` partitions.
    /// - Throws: ``PartitionError`` when `count` is outside ``counts``.
    public init(count: Int) throws(PartitionError) {
        guard Self.counts.contains(count) else {
            throw PartitionError("the partition count must be \(Self.counts.lowerBound)-\(Self.counts.upperBound), not \(count)")
        }
        self.count = count
    }

    /// The partition that holds `learner`'s data.
    public func partition(ofLearner learner: String) -> Int {
        var learner = learner
        return learner.withUTF8 { partition(ofLearnerBytes: $0) }
    }

    /// The partition of the learner whose id has these UTF-8 bytes.
    public func partition(ofLearnerBytes bytes: some Sequence<UInt8>) -> Int {
        Int(Self.hash(bytes) % UInt64(count))
    }

    /// Every partition, in order.
    public var all: Range<Int> { 0..<count }

    /// FNV-1a, 64 bits: offset basis 0xcbf29ce484222325, prime 0x100000001b3, each byte XORed
    /// in before the multiplication.
    public static func hash(_ bytes: some Sequence<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return hash
    }

    public var description: String { "\(count) partitions" }
}

/// A partition count, name or list that cannot be used, with what is wrong.
public struct PartitionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, for a person.
    public let message: String

    /// An error saying `message`.
    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
