import LyceumSupport

/// Calls `start` with a callback and returns the value that callback receives, sleeping until it
/// arrives: the waiting forms of the services' handlers are built on this, so that there is one
/// implementation of each handler, the asynchronous one. Reads call back before `start` returns,
/// so the wait finds the value before it would sleep: the common case costs no sleep and no wake-up.
func waitForCallback<Value: Sendable>(_ start: (@escaping @Sendable (Value) -> Void) -> Void) -> Value {
    let delivery = AwaitedResult<Value, Never>()
    start { delivery.settle(.success($0)) }
    return delivery.wait().get()
}
