import Foundation
import LyceumLifecycle
import Testing

@Suite("BatchedSignals")
struct BatchedSignalsTests {
    /// Counts the signals it receives.
    final class Receiver {
        var signals = 0
    }

    @Test("outside a batch a signal is sent at once")
    func immediateOutsideABatch() {
        let receiver = Receiver()
        #expect(!BatchedSignals.isBatching)
        BatchedSignals.signal(receiver) { receiver.signals += 1 }
        #expect(receiver.signals == 1)
    }

    @Test("in a batch, signals wait for its end and are sent once per receiver")
    func deferredAndCoalesced() {
        let first = Receiver()
        let second = Receiver()
        BatchedSignals.run {
            #expect(BatchedSignals.isBatching)
            for _ in 0..<5 { BatchedSignals.signal(first) { first.signals += 1 } }
            BatchedSignals.signal(second) { second.signals += 1 }
            #expect(first.signals == 0 && second.signals == 0)
        }
        #expect(first.signals == 1 && second.signals == 1)
        #expect(!BatchedSignals.isBatching)
    }

    @Test("a nested batch sends its own signals when it ends; a throwing batch still sends them")
    func nestingAndErrors() {
        struct Failure: Error {}
        let outer = Receiver()
        let inner = Receiver()
        BatchedSignals.run {
            BatchedSignals.signal(outer) { outer.signals += 1 }
            BatchedSignals.run { BatchedSignals.signal(inner) { inner.signals += 1 } }
            #expect(inner.signals == 1 && outer.signals == 0)
        }
        #expect(outer.signals == 1)
        #expect(throws: Failure.self) {
            try BatchedSignals.run { () throws(Failure) in
                BatchedSignals.signal(outer) { outer.signals += 1 }
                throw Failure()
            }
        }
        #expect(outer.signals == 2)
    }

    @Test("batches are per thread")
    func perThread() async {
        let receiver = Receiver()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            BatchedSignals.run {
                let thread = Thread {
                    #expect(!BatchedSignals.isBatching)
                    done.resume()
                }
                thread.start()
                BatchedSignals.signal(receiver) { receiver.signals += 1 }
            }
        }
        #expect(receiver.signals == 1)
    }
}
