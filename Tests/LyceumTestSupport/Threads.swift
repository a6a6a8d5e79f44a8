import Foundation
import LyceumSupport

/// Errors the test utilities report instead of hanging.
public struct TestTimeout: Error, CustomStringConvertible {
    /// What was being waited for.
    public let what: String
    /// How long it was waited for.
    public let limit: Duration
    /// `timed out after <limit> waiting for <what>`.
    public var description: String { "timed out after \(limit) waiting for \(what)" }
}

/// A value computed on a dedicated thread, so that blocking ZeroMQ calls never occupy the
/// test runner's cooperative threads.
public final class ThreadResult<Value: Sendable>: Sendable {
    private let outcome = AwaitedResult<Value, any Error>()

    /// Starts `body` on a new thread.
    public init(_ name: String = "test", _ body: @escaping @Sendable () throws -> Value) {
        let thread = Thread { [self] in
            outcome.settle(Result { try body() })
        }
        thread.name = name
        thread.start()
    }

    /// Waits for the thread's value, rethrowing its error; fails at the hang limit `limit`.
    public func value(within limit: Duration = .hangLimit) throws -> Value {
        guard let outcome = outcome.wait(timeout: limit) else { throw TestTimeout(what: "thread result", limit: limit) }
        return try outcome.get()
    }
}

/// A gate that one thread opens once and any number wait at: how a test holds a job or a thread
/// where it wants it, and learns that one got there.
public final class Gate: Sendable {
    private let opened = AwaitedResult<Void, Never>()

    /// A closed gate.
    public init() {}

    /// Opens the gate for every waiter, now and later.
    public func open() { opened.settle(.success(())) }

    /// Waits until the gate is open; false at the hang limit `limit`.
    @discardableResult
    public func wait(within limit: Duration = .hangLimit) -> Bool { opened.wait(timeout: limit) != nil }
}
