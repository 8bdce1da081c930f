import CUplinkShim
import Glibc
import UplinkCore

/// Runs an external body validator: no shell, the body on stdin, the facts in the
/// environment, a time limit (TERM, then KILL). Exit status 0 means "valid".
public struct ValidatorRunner: Sendable {
    public let timeoutMilliseconds: Int

    public init(timeoutMilliseconds: Int) {
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    /// True when the validator accepted the body; false on any failure, which is logged.
    public func accepts(_ command: ValidatorCommand, body: [UInt8], status: Int, url: String,
                        interface: InterfaceName) -> Bool {
        do {
            let exitStatus = try run(command, body: body, environment: [
                "UPLINK_HTTP_STATUS=\(status)",
                "UPLINK_PROBE_URL=\(url)",
                "UPLINK_INTERFACE=\(interface.value)",
                "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            ])
            if exitStatus != 0 {
                Log.info("validator \(command.path) rejected the body from \(url) on \(interface) (exit \(exitStatus))")
            }
            return exitStatus == 0
        } catch {
            Log.warning("validator \(command.path) for \(url): \(error)")
            return false
        }
    }

    /// Returns the exit status (128+N for a signal).
    func run(_ command: ValidatorCommand, body: [UInt8], environment: [String]) throws(SystemError) -> Int32 {
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { throw SystemError("pipe") }
        // Close-on-exec so only the child's stdin (a dup2 copy) survives the exec.
        _ = fcntl(pipeEnds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(pipeEnds[1], F_SETFD, FD_CLOEXEC)
        defer { if pipeEnds[1] >= 0 { close(pipeEnds[1]) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipeEnds[0], 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)

        let argv = [command.path] + command.arguments
        var pid: pid_t = 0
        let spawned = withCStringArray(argv) { arguments in
            withCStringArray(environment) { variables in
                posix_spawn(&pid, command.path, &actions, nil, arguments, variables)
            }
        }
        close(pipeEnds[0])
        guard spawned == 0 else { throw SystemError("starting \(command.path)", errno: spawned) }

        // The body is at most 64 KiB, which a pipe holds without blocking; a validator
        // that exits without reading just makes this write fail with EPIPE.
        let previous = signal(SIGPIPE, SIG_IGN)
        body.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = write(pipeEnds[1], raw.baseAddress! + offset, raw.count - offset)
                if written < 0 && errno == EINTR { continue }
                if written <= 0 { break }
                offset += written
            }
        }
        signal(SIGPIPE, previous)
        close(pipeEnds[1])
        pipeEnds[1] = -1
        return try ChildWaiter.wait(for: pid, timeoutMilliseconds: timeoutMilliseconds, name: command.path)
    }
}

/// Waits for a child with a time limit, through a pidfd and poll (no SIGCHLD handler,
/// no sleep loop): TERM at the limit, KILL one second later.
enum ChildWaiter {
    static func wait(for pid: pid_t, timeoutMilliseconds: Int, name: String) throws(SystemError) -> Int32 {
        let pidfd = uplinkd_pidfd_open(pid)
        if pidfd >= 0 {
            defer { close(pidfd) }
            if !waitReadable(pidfd, milliseconds: timeoutMilliseconds) {
                Log.warning("\(name) exceeded \(timeoutMilliseconds) ms; sending TERM")
                kill(pid, SIGTERM)
                if !waitReadable(pidfd, milliseconds: 1_000) {
                    kill(pid, SIGKILL)
                }
            }
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw SystemError("waitpid \(name)") }
        }
        if status & 0x7f == 0 { return (status >> 8) & 0xff }
        return 128 + (status & 0x7f)
    }

    private static func waitReadable(_ descriptor: Int32, milliseconds: Int) -> Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let deadline = MonotonicClock.nowMilliseconds() + milliseconds
        while true {
            let remaining = max(0, deadline - MonotonicClock.nowMilliseconds())
            let result = poll(&entry, 1, Int32(remaining))
            if result > 0 { return true }
            if result == 0 { return false }
            if errno != EINTR { return false }
        }
    }
}

/// Calls `body` with a NULL-terminated C array of the strings, valid only inside.
func withCStringArray<Result>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> Result) -> Result {
    let pointers = strings.map { strdup($0) }
    defer { pointers.forEach { free($0) } }
    return body(pointers + [nil])
}
