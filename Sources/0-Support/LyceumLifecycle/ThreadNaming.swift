import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension Thread {
    /// Names the calling thread `name`, for the operating system too, so that `top -H`, `perf`
    /// and `/proc/PID/task/*/comm` tell Lyceum's threads apart. The system keeps at most 15
    /// bytes, so the name is cut to the whole characters that fit.
    public static func nameCurrent(_ name: String) {
        var systemName = ""
        for character in name {
            guard systemName.utf8.count + character.utf8.count <= 15 else { break }
            systemName.append(character)
        }
        Thread.current.name = systemName
        // Foundation hands a name to the system only once the thread that started this one has
        // stored its handle, and a thread that names itself first thing can get there before:
        // it would keep the name it inherited from its creator. So the name is written here, to
        // the thread's `comm` (what `pthread_setname_np` does on Linux; Glibc's module map does
        // not export that function).
        let descriptor = open("/proc/thread-self/comm", O_WRONLY)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        _ = systemName.utf8CString.withUnsafeBufferPointer { write(descriptor, $0.baseAddress, $0.count - 1) }
    }
}
