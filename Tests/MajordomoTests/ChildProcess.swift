import Foundation
import LyceumTestSupport

extension ChildProcess {
    /// mdp-peer, built as a dependency of the test target.
    static func peer(_ arguments: [String]) throws -> ChildProcess {
        try ChildProcess(productsDirectory.appendingPathComponent("mdp-peer"), arguments)
    }

    /// The Python peer, run by Debian's interpreter, which has pyzmq.
    static func python(_ arguments: [String]) throws -> ChildProcess {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Peers/mdp_peer.py")
        return try ChildProcess(URL(fileURLWithPath: "/usr/bin/python3"), [script.path] + arguments)
    }
}
