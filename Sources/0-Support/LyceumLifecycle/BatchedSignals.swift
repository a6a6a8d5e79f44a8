#if canImport(Glibc)
import Glibc
#endif

/// Signals to other threads that a thread may hold back until it has finished a batch of work,
/// so that a consumer woken for every item it is handed is woken once per batch instead.
///
/// Waking a sleeping thread is a system call for the waker and a context switch for the woken;
/// a loop that handles many messages per wake-up (such as a broker's) and hands each one's
/// result to another thread would otherwise pay both per message. A batch is a dynamic scope on
/// one thread: ``run(_:)`` marks it, and ``signal(_:_:)`` called inside it (however deep)
/// defers the signal to the end of the scope.
public enum BatchedSignals {
    /// The calling thread's current batch, if it is running one.
    private static let currentBatch: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "no thread-specific key left for BatchedSignals")
        return key
    }()

    /// The signals a batch owes, one per receiver.
    private final class Batch {
        var owed: [(receiver: ObjectIdentifier, signal: () -> Void)] = []

        func add(_ receiver: ObjectIdentifier, _ signal: @escaping () -> Void) {
            guard !owed.contains(where: { $0.receiver == receiver }) else { return }
            owed.append((receiver, signal))
        }

        func send() {
            for entry in owed { entry.signal() }
        }
    }

    /// Runs `body` as a batch: signals deferred during it are sent, once per receiver, when it
    /// returns or throws. Batches may nest; an inner one sends its own signals when it ends.
    public static func run<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        let batch = Batch()
        let outer = pthread_getspecific(currentBatch)
        pthread_setspecific(currentBatch, Unmanaged.passUnretained(batch).toOpaque())
        defer {
            pthread_setspecific(currentBatch, outer)
            batch.send()
        }
        return try body()
    }

    /// Whether the calling thread is running a batch, so that a signal would be deferred.
    public static var isBatching: Bool { pthread_getspecific(currentBatch) != nil }

    /// Runs `signal` at the end of the calling thread's batch (once for `receiver`, however
    /// often it is asked), or now when the thread is not running one.
    public static func signal(_ receiver: AnyObject, _ signal: @escaping () -> Void) {
        guard let current = pthread_getspecific(currentBatch) else { return signal() }
        Unmanaged<Batch>.fromOpaque(current).takeUnretainedValue().add(ObjectIdentifier(receiver), signal)
    }
}
