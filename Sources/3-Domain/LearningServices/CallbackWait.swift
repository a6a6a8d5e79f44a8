import Dispatch
import Synchronization

/// Calls `start` with a callback and returns the value that callback receives, sleeping until it
/// arrives: the waiting forms of the services' handlers are built on this, so that there is one
/// implementation of each handler, the asynchronous one.
func waitForCallback<Value: Sendable>(_ start: (@escaping @Sendable (Value) -> Void) -> Void) -> Value {
    let delivery = Delivery<Value>()
    start { delivery.deliver($0) }
    return delivery.wait()
}

/// One value handed from the thread that calls back to the thread that waits. Reads call back
/// before `start` returns, so `wait()` looks for the value before it sleeps: the common case
/// costs no sleep and no wake-up.
private final class Delivery<Value: Sendable>: Sendable {
    private let value = Mutex<Value?>(nil)
    private let arrived = DispatchSemaphore(value: 0)

    func deliver(_ delivered: Value) {
        value.withLock { $0 = delivered }
        arrived.signal()
    }

    func wait() -> Value {
        while true {
            if let delivered = value.withLock({ $0 }) { return delivered }
            arrived.wait()
        }
    }
}
