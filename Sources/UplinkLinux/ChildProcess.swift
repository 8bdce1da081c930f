import CUplinkShim
import Glibc

/// A child process owned by the event loop: started without a shell, its output read
/// line by line through a pipe, its exit seen through a pidfd (no SIGCHLD handler), and
/// a time limit enforced with TERM, then KILL after a grace period.
///
/// Ownership: the loop's watchers hold the only strong references while the child
/// runs; `completion` runs once, on the loop, after the child was reaped.
public final class ChildProcess {
    public struct Termination: Sendable, Equatable {
        /// Exit status, or 128 + signal number.
        public let status: Int32
        public let timedOut: Bool
    }

    public let name: String
    public let pid: pid_t
    private let loop: EventLoop
    private let pidDescriptor: Int32
    private var outputDescriptor: Int32
    private var inputDescriptor: Int32
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
    public init(loop: EventLoop, name: String, arguments: [String], environment: [String], input: [UInt8] = [],
                timeoutMilliseconds: Int, killGraceMilliseconds: Int = 5_000,
                onLine: @escaping (String) -> Void, completion: @escaping (Termination) -> Void) throws(SystemError) {
        self.loop = loop
        self.name = name
        self.onLine = onLine
        self.completion = completion
        self.pendingInput = input

        var output: [Int32] = [-1, -1]
        var stdinPipe: [Int32] = [-1, -1]
        guard pipe(&output) == 0 else { throw SystemError("pipe for \(name)") }
        guard pipe(&stdinPipe) == 0 else {
            close(output[0]); close(output[1])
            throw SystemError("pipe for \(name)")
        }
        for descriptor in output + stdinPipe { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdinPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        posix_spawn_file_actions_adddup2(&actions, output[1], 2)
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
        close(output[1])
        close(stdinPipe[0])
        guard spawned == 0 else {
            close(output[0]); close(stdinPipe[1])
            throw SystemError("starting \(arguments[0])", errno: spawned)
        }
        self.pid = pid
        outputDescriptor = output[0]
        inputDescriptor = stdinPipe[1]
        _ = fcntl(outputDescriptor, F_SETFL, fcntl(outputDescriptor, F_GETFL) | O_NONBLOCK)
        _ = fcntl(inputDescriptor, F_SETFL, fcntl(inputDescriptor, F_GETFL) | O_NONBLOCK)

        let pidDescriptor = uplinkd_pidfd_open(pid)
        guard pidDescriptor >= 0 else {
            let error = SystemError("pidfd_open for \(name)")
            kill(-pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            close(outputDescriptor); close(inputDescriptor)
            throw error
        }
        self.pidDescriptor = pidDescriptor

        do {
            try loop.watch(outputDescriptor, for: .readable) { [self] _ in readOutput() }
            if pendingInput.isEmpty {
                closeInput()
            } else {
                try loop.watch(inputDescriptor, for: .writable) { [self] _ in writeInput() }
            }
            try loop.watch(pidDescriptor, for: .readable) { [self] _ in childExited() }
        } catch {
            // Undo everything, so nothing is left in the loop and no zombie remains.
            kill(-pid, SIGKILL)
            loop.unwatch(pidDescriptor)
            closeOutputDescriptor()
            closeInput()
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            close(pidDescriptor)
            self.completion = nil
            throw error
        }
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

    private func writeInput() {
        while !pendingInput.isEmpty {
            let written = pendingInput.withUnsafeBytes { write(inputDescriptor, $0.baseAddress, $0.count) }
            if written > 0 {
                pendingInput.removeFirst(written)
            } else if written < 0 && errno == EINTR {
                continue
            } else if written < 0 && errno == EAGAIN {
                return
            } else {
                break  // EPIPE: the child does not read its input; that is its business.
            }
        }
        closeInput()
    }

    private func closeInput() {
        guard inputDescriptor >= 0 else { return }
        loop.unwatch(inputDescriptor)
        close(inputDescriptor)
        inputDescriptor = -1
    }

    /// Reads what is there, at most 16 chunks per wake-up: epoll is level-triggered and
    /// calls again, and a child that floods its output cannot keep the loop (and with
    /// it the child's own time limit) from running.
    private func readOutput() {
        var buffer = [UInt8](repeating: 0, count: 4_096)
        var chunks = 0
        while outputDescriptor >= 0 && chunks < 16 {
            let count = buffer.withUnsafeMutableBytes { read(outputDescriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                chunks += 1
                consume(buffer[0..<count])
            } else if count < 0 && errno == EINTR {
                continue
            } else if count < 0 && errno == EAGAIN {
                return
            } else {
                closeOutput()
            }
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
        guard outputDescriptor >= 0 else { return }
        if !partialLine.isEmpty { emitLine() }
        closeOutputDescriptor()
        finishIfDone()
    }

    private func closeOutputDescriptor() {
        guard outputDescriptor >= 0 else { return }
        loop.unwatch(outputDescriptor)
        close(outputDescriptor)
        outputDescriptor = -1
    }

    private func childExited() {
        exited = true
        loop.unwatch(pidDescriptor)
        // Output written just before exit is still in the pipe: read it now.
        readOutput()
        finishIfDone()
    }

    /// Completes once the child exited; output still held open by a grandchild is not
    /// waited for.
    private func finishIfDone() {
        guard exited, let completion else { return }
        self.completion = nil
        if outputDescriptor >= 0 && !partialLine.isEmpty { emitLine() }
        closeOutputDescriptor()
        closeInput()
        for timer in timers { loop.cancel(timer) }
        // Over its limit, what the child left behind in its group goes too (the group id
        // stays reserved until the leader, a zombie now, is reaped just below).
        if timedOut { kill(-pid, SIGKILL) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        close(pidDescriptor)
        let code = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        completion(Termination(status: code, timedOut: timedOut))
    }
}

extension String {
    /// Control characters replaced, so a child's output cannot forge log lines.
    var printableForLog: String {
        String(unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7f ? "?" : Character($0) })
    }
}

/// Calls `body` with a NULL-terminated C array of the strings, valid only inside.
func withCStringArray<Result>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> Result) -> Result {
    let pointers = strings.map { strdup($0) }
    defer { pointers.forEach { free($0) } }
    return body(pointers + [nil])
}
