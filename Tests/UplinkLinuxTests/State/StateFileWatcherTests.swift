import Glibc
import Testing
@testable import UplinkLinux

/// `StateFileWatcher` (wait-online): an atomic replacement of the watched
/// file ends a wait at once, other names in the directory do not, and a directory
/// that appears later is watched from the next wait on.
@Suite("State file watcher")
struct StateFileWatcherTests {
    /// Long enough that a wait ending by its time limit cannot pass for an event.
    private let longWaitMilliseconds = 10_000

    private func directory() throws -> String {
        var template = Array("/tmp/uplinkd-watcher-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        return String(cString: try #require(made))
    }

    private func writeFile(_ path: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        if fd >= 0 { _ = Glibc.write(fd, "x\n", 2); close(fd) }
    }

    /// Runs `change` on another thread after a short delay, while the caller waits.
    private func later(_ change: @escaping @Sendable () -> Void) -> pthread_t {
        final class Box { let body: @Sendable () -> Void; init(_ body: @escaping @Sendable () -> Void) { self.body = body } }
        var thread = pthread_t()
        let box = Unmanaged.passRetained(Box(change)).toOpaque()
        pthread_create(&thread, nil, { raw in
            let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
            usleep(100_000)
            box.body()
            return nil
        }, box)
        return thread
    }

    private func elapsedMilliseconds(_ body: () -> Bool) -> (Bool, Int) {
        let clock = SystemTimeSource()
        let start = clock.monotonicMilliseconds
        let result = body()
        return (result, clock.monotonicMilliseconds - start)
    }

    @Test func aRenameOntoTheFileEndsTheWait() throws {
        let dir = try directory()
        let path = dir + "/state"
        let watcher = StateFileWatcher(path: path)
        #expect(watcher.isWatching)
        let thread = later {
            // What the agent does: a temporary file (an event the watcher must not
            // take for the file), then the rename.
            self.writeFile(path + ".tmp.1")
            rename(path + ".tmp.1", path)
        }
        let (heard, milliseconds) = elapsedMilliseconds { watcher.wait(milliseconds: longWaitMilliseconds) }
        pthread_join(thread, nil)
        #expect(heard)
        #expect(milliseconds < longWaitMilliseconds)
        unlink(path)
        rmdir(dir)
    }

    @Test func otherNamesDoNotEndTheWait() throws {
        let dir = try directory()
        let watcher = StateFileWatcher(path: dir + "/state")
        let thread = later { self.writeFile(dir + "/other") }
        let (heard, milliseconds) = elapsedMilliseconds { watcher.wait(milliseconds: 600) }
        pthread_join(thread, nil)
        #expect(!heard)
        #expect(milliseconds >= 600)
        unlink(dir + "/other")
        rmdir(dir)
    }

    @Test func aDirectoryMadeLaterIsWatchedFromTheNextWait() throws {
        let parent = try directory()
        let dir = parent + "/run"
        let path = dir + "/state"
        let watcher = StateFileWatcher(path: path)
        #expect(!watcher.isWatching)
        // No directory: the wait is a plain bounded sleep.
        let (heard, milliseconds) = elapsedMilliseconds { watcher.wait(milliseconds: 200) }
        #expect(!heard && milliseconds >= 200)
        mkdir(dir, 0o755)
        let thread = later { self.writeFile(path) }
        let (heardLater, _) = elapsedMilliseconds { watcher.wait(milliseconds: longWaitMilliseconds) }
        pthread_join(thread, nil)
        #expect(heardLater)
        #expect(watcher.isWatching)
        // The directory removed and made again: the old watch's end is heard, and the
        // new directory is watched after it.
        unlink(path)
        rmdir(dir)
        #expect(watcher.wait(milliseconds: longWaitMilliseconds))
        #expect(!watcher.isWatching)
        mkdir(dir, 0o755)
        let again = later { self.writeFile(path) }
        #expect(watcher.wait(milliseconds: longWaitMilliseconds))
        pthread_join(again, nil)
        unlink(path)
        rmdir(dir)
        rmdir(parent)
    }
}
