import CLinuxShim
import Glibc

/// A child process owned by the event loop: started without a shell, its output read
/// line by line through a pipe, its exit seen through a pidfd (no SIGCHLD handler), and
/// a time limit enforced with TERM, then KILL after a grace period. Hooks and external
/// validators both run this way.
///
/// Ownership: the loop's watchers hold the only strong references while the child
/// runs; `completion` runs once, on the loop, after the child was reaped.
package final class ChildProcess {
    package struct Termination: Sendable, Equatable {
        /// Exit status, or 128 + signal number.
        package let status: Int32
        package let timedOut: Bool
    }

    /// The only PATH children get: their environment is otherwise what the caller
    /// names, never the agent's own.
    package static let searchPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

    package let name: String
    package let pid: pid_t
    private let loop: EventLoop
    private let pidDescriptor: FileDescriptor
    private let output: FileDescriptor
    private let input: FileDescriptor
    private var pendingInput: [UInt8]
    private var partialLine: [UInt8] = []
    private let onLine: (String) -> Void
    private var completion: ((Termination) -> Void)?
    private var timers: [EventLoop.TimerID] = []
    private var timedOut = false
    private var exited = false
    /// Guards against a child that prints without end: output beyond this is dropped.
    private var outputBudgetBytes = 1 << 20

    /// Starts `arguments[0]` (an absolute path) with exactly `environment`.
    package init(loop: EventLoop, name: String, arguments: [String], environment: [String], input: [UInt8] = [],
                timeoutMilliseconds: Int, killGraceMilliseconds: Int = 5_000,
                onLine: @escaping (String) -> Void, completion: @escaping (Termination) -> Void) throws(SystemError) {
        self.loop = loop
        self.name = name
        self.onLine = onLine
        self.completion = completion
        self.pendingInput = input

        let outputPipe = try FileDescriptor.pipe(label: "output of \(name)")
        let inputPipe = try FileDescriptor.pipe(label: "input of \(name)")
        let pid = try ChildProcess.spawn(arguments, environment: environment,
                                         stdin: inputPipe.read.rawValue, stdout: outputPipe.write.rawValue)
        // The child holds its own copies now.
        outputPipe.write.close()
        inputPipe.read.close()
        self.pid = pid
        output = outputPipe.read
        self.input = inputPipe.write

        pidDescriptor = try ChildProcess.openPidDescriptor(pid, name: name)
        try startWatching()
        enforceTimeLimit(timeoutMilliseconds: timeoutMilliseconds, killGraceMilliseconds: killGraceMilliseconds)
    }

    /// The loop sees the child's exit through a pidfd (no SIGCHLD handler): a child
    /// without one would run unwatched, so it is killed and reaped at once.
    private static func openPidDescriptor(_ pid: pid_t, name: String) throws(SystemError) -> FileDescriptor {
        let pidfd: Int32
        do {
            pidfd = try Syscall.call("pidfd_open for \(name)") { uplinkd_pidfd_open(pid) }
        } catch {
            kill(-pid, SIGKILL)
            var status: Int32 = 0
            _ = try? Syscall.call("waitpid") { waitpid(pid, &status, 0) }
            throw error
        }
        return FileDescriptor(owning: pidfd, label: "pidfd of \(name)")
    }

    /// Hands the pipes and the pidfd to the loop; a failure halfway leaves nothing
    /// behind (no watcher in the loop, no zombie), as if the child never started.
    private func startWatching() throws(SystemError) {
        do {
            try output.setNonblocking()
            try input.setNonblocking()
            try loop.watch(output.rawValue, for: .readable) { [self] _ in readOutput() }
            if pendingInput.isEmpty {
                closeInput()
            } else {
                try loop.watch(input.rawValue, for: .writable) { [self] _ in writeInput() }
            }
            try loop.watch(pidDescriptor.rawValue, for: .readable) { [self] _ in childExited() }
        } catch {
            // Undo everything, so nothing is left in the loop and no zombie remains.
            kill(-pid, SIGKILL)
            loop.unwatch(output.rawValue)
            loop.unwatch(input.rawValue)
            loop.unwatch(pidDescriptor.rawValue)
            var status: Int32 = 0
            _ = try? Syscall.call("waitpid") { waitpid(pid, &status, 0) }
            completion = nil
            throw error
        }
    }

    /// A child that hangs must not hold up what waits for it (the next hook, a
    /// probe's verdict): TERM at the limit, KILL after the grace period if ignored.
    private func enforceTimeLimit(timeoutMilliseconds: Int, killGraceMilliseconds: Int) {
        timers.append(loop.schedule(afterMilliseconds: timeoutMilliseconds) { [self] in
            guard !exited else { return }
            timedOut = true
            Log.warning("\(name) exceeded its time limit of \(timeoutMilliseconds) ms; sending TERM")
            kill(-pid, SIGTERM)
            timers.append(loop.schedule(afterMilliseconds: killGraceMilliseconds) { [self] in
                guard !exited else { return }
                Log.warning("\(name) ignored TERM; sending KILL")
                kill(-pid, SIGKILL)
            })
        })
    }

    /// posix_spawn with the pipes as standard streams, default signal handling, an
    /// empty signal mask and a process group of its own.
    private static func spawn(_ arguments: [String], environment: [String],
                              stdin: Int32, stdout: Int32) throws(SystemError) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdin, 0)
        posix_spawn_file_actions_adddup2(&actions, stdout, 1)
        posix_spawn_file_actions_adddup2(&actions, stdout, 2)
        // The agent blocks TERM/INT/HUP for its signalfd; a child must not inherit that.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var emptySet = sigset_t()
        sigemptyset(&emptySet)
        posix_spawnattr_setsigmask(&attributes, &emptySet)
        var defaultSignals = sigset_t()
        sigemptyset(&defaultSignals)
        for signal in [SIGPIPE, SIGTERM, SIGINT, SIGHUP] { sigaddset(&defaultSignals, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaultSignals)
        // A process group of its own, so the time limit reaches what a hook started
        // too (a shell's `sleep`), not only the hook itself.
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))

        var pid: pid_t = 0
        let spawned = withCStringArray(arguments) { argv in
            withCStringArray(environment) { envp in
                posix_spawn(&pid, arguments[0], &actions, &attributes, argv, envp)
            }
        }
        // posix_spawn returns the error number instead of setting errno.
        guard spawned == 0 else { throw SystemError("starting \(arguments[0])", errno: spawned) }
        return pid
    }

    private func writeInput() {
        do {
            while !pendingInput.isEmpty {
                guard let written = try input.write(pendingInput[...]) else { return }  // full: wait
                pendingInput.removeFirst(written)
            }
        } catch {
            // EPIPE: the child does not read its input; that is its business.
        }
        closeInput()
    }

    private func closeInput() {
        guard input.isOpen else { return }
        loop.unwatch(input.rawValue)
        input.close()
    }

    /// Reads what is there, at most 16 chunks per wake-up: epoll is level-triggered and
    /// calls again, and a child that floods its output cannot keep the loop (and with
    /// it the child's own time limit) from running.
    private func readOutput() {
        var buffer = [UInt8](repeating: 0, count: 4_096)
        var chunks = 0
        while output.isOpen && chunks < 16 {
            let count: Int?
            do { count = try output.read(into: &buffer) } catch { count = 0 }
            guard let count else { return }  // nothing more for now
            if count == 0 {
                closeOutput()
                return
            }
            chunks += 1
            consume(buffer[0..<count])
        }
    }

    private func consume(_ bytes: ArraySlice<UInt8>) {
        outputBudgetBytes -= bytes.count
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                emitLine()
            } else if partialLine.count < 4_096 {
                partialLine.append(byte)
            }
        }
        if outputBudgetBytes <= 0 {
            // Stop listening: the child blocks on a full pipe until its time limit.
            onLine("(further output ignored: more than 1 MiB)")
            if !partialLine.isEmpty { emitLine() }
            closeOutputDescriptor()
        }
    }

    private func emitLine() {
        onLine(String(decoding: partialLine, as: UTF8.self).printableForLog)
        partialLine.removeAll(keepingCapacity: true)
    }

    private func closeOutput() {
        guard output.isOpen else { return }
        if !partialLine.isEmpty { emitLine() }
        closeOutputDescriptor()
        finishIfDone()
    }

    private func closeOutputDescriptor() {
        guard output.isOpen else { return }
        loop.unwatch(output.rawValue)
        output.close()
    }

    private func childExited() {
        exited = true
        loop.unwatch(pidDescriptor.rawValue)
        // Output written just before exit is still in the pipe: read it now.
        readOutput()
        finishIfDone()
    }

    /// Completes once the child exited; output still held open by a grandchild is not
    /// waited for.
    private func finishIfDone() {
        guard exited, let completion else { return }
        self.completion = nil
        if output.isOpen && !partialLine.isEmpty { emitLine() }
        closeOutputDescriptor()
        closeInput()
        for timer in timers { loop.cancel(timer) }
        // Over its limit, what the child left behind in its group goes too (the group id
        // stays reserved until the leader, a zombie now, is reaped just below).
        if timedOut { kill(-pid, SIGKILL) }
        var status: Int32 = 0
        _ = try? Syscall.call("waitpid for \(name)") { waitpid(pid, &status, 0) }
        pidDescriptor.close()
        let code = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        completion(Termination(status: code, timedOut: timedOut))
    }
}

/// Calls `body` with a NULL-terminated C array of the strings, valid only inside.
func withCStringArray<Result>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> Result) -> Result {
    let pointers = strings.map { strdup($0) }
    defer { pointers.forEach { free($0) } }
    return body(pointers + [nil])
}
