import Foundation
import Partitions

/// A copy of a partition that a move renamed away on the source,
/// `DATA/<service>/p<N>.moved-to-<node>-<time>`: never served again, kept until the operator
/// prunes it (`lyceum partitions prune`), and the source of the `adopt` that finishes a move
/// whose `adopt` was lost.
public struct MovedAwayCopy: Equatable, Sendable {
    public let service: String
    public let partition: Int
    /// The node it was moved to.
    public let to: String
    /// When the source renamed it away, as the name says (`20261201T220455Z`, UTC; sortable).
    public let stamp: String
    /// Its path.
    public let directory: String

    /// The moved-away copies of each of `services` under `dataDirectory`, in service, then name
    /// order; none for a service directory that does not exist or cannot be listed.
    public static func all(in dataDirectory: String, services: [String]) -> [MovedAwayCopy] {
        services.flatMap { service in
            let parent = (dataDirectory as NSString).appendingPathComponent(service)
            return ((try? FileManager.default.contentsOfDirectory(atPath: parent)) ?? []).sorted().compactMap { name in
                MovedAwayCopy(service: service, name: name, in: parent)
            }
        }
    }

    /// The copy that `name` in `parent` (the directory of `service`) stands for; `nil` when the
    /// name is not a moved-away copy's.
    init?(service: String, name: String, in parent: String) {
        guard let moved = PartitionMover.movedAway(name) else { return nil }
        let stamp = String(name.suffix(16))
        guard stamp.enumerated().allSatisfy({ offset, character in
            switch offset {
            case 8: character == "T"
            case 15: character == "Z"
            default: character.isASCII && character.isNumber
            }
        }) else { return nil }
        self.service = service
        partition = moved.partition
        to = moved.to
        self.stamp = stamp
        directory = (parent as NSString).appendingPathComponent(name)
    }
}
