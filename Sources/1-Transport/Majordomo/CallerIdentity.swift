import Access

/// The caller's identity as the broker appends it to the client address of a REQUEST, and as
/// Lyceum's workers read it back (protocol/majordomo.md, "Callers and workers").
///
/// The address frame is the broker's 8-byte per-request address, then, with security on, this
/// encoding of the principal:
///
/// | Bytes | Content |
/// |-------|---------|
/// | 1 | format version, `0x01` |
/// | 1 + n | role name length n (1–16), role name (ASCII: `worker`, `app`, `learner`, `dashboard`, `admin`) |
/// | 1 + n | key name length n (0–255), key name (UTF-8; longer names are cut at 255 bytes) |
/// | 1 | learner count m (0–32) |
/// | m × (1 + n) | each learner id: length n (1–255), id (UTF-8), in ascending byte order |
///
/// So an identity is at most ``maxEncodedSize`` bytes. A standard 7/MDP worker echoes the whole
/// frame untouched, as the protocol requires, so the broker still finds its request.
public enum CallerIdentity {
    /// The format version this build writes and reads.
    static let version: UInt8 = 1
    /// The most learners an identity carries, as many as a certificate may list.
    public static let maxLearners = 32
    /// The longest role name, key name or learner id, in bytes.
    static let maxFieldBytes = 255
    /// The longest role name, in bytes.
    static let maxRoleBytes = 16
    /// The largest encoding: version, role, name, count and 32 learners of the longest length.
    public static let maxEncodedSize = 1 + (1 + maxRoleBytes) + (1 + maxFieldBytes) + 1 + maxLearners * (1 + maxFieldBytes)
    /// The broker's per-request address that comes before the identity.
    public static let addressSize = 8

    /// The bytes that carry `principal`. Fails safe: a name longer than 255 bytes is cut (it is
    /// only for logs), and learners beyond the first 32 in byte order, or with ids longer than
    /// 255 bytes, are left out, so an identity can only lose rights, never gain them.
    public static func encode(_ principal: Principal) -> [UInt8] {
        var output: [UInt8] = [version]
        append(Array(principal.role.rawValue.utf8), to: &output)
        append(Array(principal.name.utf8.prefix(maxFieldBytes)), to: &output)
        let learners = principal.learners.map { Array($0.utf8) }.filter { (1...maxFieldBytes).contains($0.count) }
            .sorted { $0.lexicographicallyPrecedes($1) }.prefix(maxLearners)
        output.append(UInt8(learners.count))
        for learner in learners { append(learner, to: &output) }
        return output
    }

    /// The principal encoded in `bytes`, or `nil` when they are not exactly one identity of this
    /// format (another version, an unknown role, a field past the end, bytes left over).
    public static func decode(_ bytes: some Collection<UInt8>) -> Principal? {
        var reader = Reader(bytes: Array(bytes))
        guard reader.byte() == version,
              let roleName = reader.field(), let role = Role(rawValue: String(decoding: roleName, as: UTF8.self)),
              let name = reader.field(),
              let count = reader.byte(), Int(count) <= maxLearners
        else { return nil }
        var learners: Set<String> = []
        for _ in 0..<count {
            guard let learner = reader.field(), !learner.isEmpty else { return nil }
            learners.insert(String(decoding: learner, as: UTF8.self))
        }
        guard reader.isAtEnd else { return nil }
        return Principal(name: String(decoding: name, as: UTF8.self), role: role, learners: learners)
    }

    /// The caller a REQUEST's client address frame names: the principal after the 8-byte
    /// address, or `nil` when the frame carries none or one this build cannot read.
    public static func principal(inClientAddress frame: [UInt8]) -> Principal? {
        frame.count > addressSize ? decode(frame.dropFirst(addressSize)) : nil
    }

    private static func append(_ field: [UInt8], to output: inout [UInt8]) {
        output.append(UInt8(field.count))
        output.append(contentsOf: field)
    }

    /// Reads length-prefixed fields from the front of the bytes.
    private struct Reader {
        let bytes: [UInt8]
        var position = 0

        var isAtEnd: Bool { position == bytes.count }

        mutating func byte() -> UInt8? {
            guard position < bytes.count else { return nil }
            defer { position += 1 }
            return bytes[position]
        }

        mutating func field() -> ArraySlice<UInt8>? {
            guard let length = byte(), bytes.count - position >= Int(length) else { return nil }
            defer { position += Int(length) }
            return bytes[position..<(position + Int(length))]
        }
    }
}
