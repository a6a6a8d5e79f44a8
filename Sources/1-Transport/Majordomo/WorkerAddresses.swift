/// The client addresses the broker shows workers: one fresh 8-byte value per request, never the
/// client's routing id.
///
/// A worker needs the address only to return it with its reply, and the broker remembers which
/// client each worker serves. Showing the routing id instead would tell any peer that registers
/// as a worker the ROUTER's next automatic ids, which is all a peer needs to make libzmq 4.3.4
/// abort (protocol/majordomo.md, "Routing ids").
struct WorkerAddresses {
    private var counter: UInt64

    /// Starts at a random value, so that addresses say nothing about the broker's history.
    init() { counter = UInt64.random(in: .min ... .max) }

    /// The address for the next request handed to a worker.
    mutating func next() -> [UInt8] {
        counter &+= 1
        return withUnsafeBytes(of: counter.bigEndian) { Array($0) }
    }
}
