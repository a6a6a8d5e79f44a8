import Foundation

/// Calls `start` with a callback and returns the value that callback receives, sleeping until it
/// arrives: the waiting forms of the services' handlers are built on this, so that there is one
/// implementation of each handler, the asynchronous one.
func waitForCallback<Value: Sendable>(_ start: (@escaping @Sendable (Value) -> Void) -> Void) -> Value {
    let delivery = Delivery<Value>()
    start { delivery.deliver($0) }
    return delivery.wait()
}

/// One value handed from the thread that calls back to the thread that waits.
private final class Delivery<Value: Sendable>: @unchecked Sendable {
    // `condition` guards `value`; @unchecked because the compiler cannot see that.
    private let condition = NSCondition()
    private var value: Value?

    func deliver(_ value: Value) {
        condition.lock()
        self.value = value
        condition.signal()
        condition.unlock()
    }

    func wait() -> Value {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let value { return value }
            condition.wait()
        }
    }
}
