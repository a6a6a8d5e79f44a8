import Foundation

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
        // Foundation passes the name of the current thread on to pthread_setname_np.
        Thread.current.name = systemName
    }
}
