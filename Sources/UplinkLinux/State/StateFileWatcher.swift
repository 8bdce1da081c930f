import Glibc

/// Waits for a file that another process replaces by rename (the agent's state file)
/// to change, without polling it: inotify on its directory, for events naming the
/// file (IN_MOVED_TO from the agent's atomic rename; IN_CREATE and IN_CLOSE_WRITE
/// from anyone writing it in place).
///
/// The directory may not exist yet (the agent creates /run/uplinkd when it starts) or
/// may be removed; the watch is then (re)made on the next wait. Callers re-read the
/// file after every wait, events or not, so a bounded wait is the fallback when no
/// watch can be made at all.
package final class StateFileWatcher {
    package let path: String
    private let directory: String
    private let name: String
    /// nil when inotify is unavailable (no instances left): then waits only time out.
    private let inotify: FileDescriptor?
    /// The directory's watch descriptor; nil while there is none.
    private var watchDescriptor: Int32?
    private let time: TimeSource

    package init(path: String, time: TimeSource = SystemTimeSource()) {
        self.path = path
        self.time = time
        (directory, name) = AtomicFile.split(path)
        let raw = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        inotify = raw >= 0 ? FileDescriptor(owning: raw, label: "inotify for \(path)") : nil
        // Before the caller's first read, so a change right after that read is heard.
        watch()
    }

    /// Whether the directory is watched now (for tests).
    package var isWatching: Bool { watchDescriptor != nil }

    /// Returns when an event names the file (true) or after `milliseconds` (false).
    /// Events about other names in the directory (the agent's temporary files) do not
    /// end the wait.
    package func wait(milliseconds: Int) -> Bool {
        let deadline = time.monotonicMilliseconds + max(0, milliseconds)
        watch()
        while true {
            let left = deadline - time.monotonicMilliseconds
            guard left > 0 else { return false }
            guard let inotify, watchDescriptor != nil else {
                sleep(milliseconds: left)
                return false
            }
            var poller = pollfd(fd: inotify.rawValue, events: Int16(POLLIN), revents: 0)
            // Retried after a signal with what is left of the wait.
            guard let ready = try? Syscall.call("poll", {
                poll(&poller, 1, Int32(clamping: max(0, deadline - time.monotonicMilliseconds)))
            }) else {
                sleep(milliseconds: left)
                return false
            }
            if ready > 0 && drainNamesFile() { return true }
        }
    }

    /// Adds the watch on the directory if there is none (it may not exist yet).
    private func watch() {
        guard let inotify, watchDescriptor == nil else { return }
        let mask = UInt32(IN_MOVED_TO | IN_CLOSE_WRITE | IN_CREATE | IN_MOVE_SELF | IN_ONLYDIR)
        let descriptor = inotify_add_watch(inotify.rawValue, directory, mask)
        watchDescriptor = descriptor >= 0 ? descriptor : nil
    }

    /// Reads every queued event; true when one named the file. A directory removed
    /// (IN_IGNORED: the kernel dropped the watch) or renamed away (IN_MOVE_SELF) counts
    /// too, as does a lost event (IN_Q_OVERFLOW): the caller looks again, and the next
    /// wait watches whatever directory has the path by then.
    private func drainNamesFile() -> Bool {
        guard let inotify else { return false }
        var named = false
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while true {
            guard let count = try? inotify.read(into: &buffer), count > 0 else { return named }
            var offset = 0
            while offset + MemoryLayout<inotify_event>.size <= count {
                let (watch, mask, length) = buffer.withUnsafeBytes { raw in
                    let event = raw.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                    return (event.wd, event.mask, Int(event.len))
                }
                let nameStart = offset + MemoryLayout<inotify_event>.size
                let nameBytes = buffer[nameStart..<min(count, nameStart + length)].prefix { $0 != 0 }
                if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                    named = true
                } else if mask & UInt32(IN_IGNORED | IN_MOVE_SELF) != 0 {
                    // Only about the current watch: a late IN_IGNORED for one removed
                    // earlier must not drop its successor.
                    if let current = watchDescriptor, current == watch {
                        if mask & UInt32(IN_MOVE_SELF) != 0 { inotify_rm_watch(inotify.rawValue, current) }
                        watchDescriptor = nil
                        named = true
                    }
                } else if String(decoding: nameBytes, as: UTF8.self) == name {
                    named = true
                }
                offset = nameStart + length
            }
        }
    }

    private func sleep(milliseconds: Int) {
        var request = timespec(tv_sec: milliseconds / 1_000, tv_nsec: (milliseconds % 1_000) * 1_000_000)
        var remaining = timespec()
        // Retried after a signal with the time that remained.
        _ = try? Syscall.call("nanosleep") {
            defer { request = remaining }
            return nanosleep(&request, &remaining)
        }
    }
}
