import Glibc
import UplinkCore
import UplinkLinux

/// A change seen by an `UplinkMonitor`: the state after it and what hooks would hear.
public struct UplinkChange: Sendable {
    public let state: AgentState
    public let events: [HookEvent]
}

/// The agent as a Swift API for programs that embed it, in the spirit of mobile
/// connectivity libraries: current verdicts per uplink and kind, an async sequence of
/// changes, and a one-off check.
///
///     let loader = ConfigurationLoader(explicitPath: "/etc/myapp/uplinkd.conf")
///     let monitor = UplinkMonitor(configuration: try loader.load(), loader: loader)
///     try monitor.start()                      // the agent on a thread of its own
///     monitor.current?.primary                 // "eth0"
///     monitor.verdict(for: .wifi)              // .captive
///     for await change in monitor.changes {    // each change: state after it and hook events
///         if monitor.isConnectedWithoutInternet(via: .wifi) { showPortalHint() }
///     }
///     monitor.reload()                         // read the file again, as HUP does (a broken one is refused)
///     monitor.reload(configuration: other)     // or switch to a Configuration built in code
///     let reports = try await UplinkMonitor.check([InterfaceName("wwan0")!], configuration: configuration)
///     monitor.stop()
///
/// The agent runs on a thread of its own with its own event loop; this object only
/// exchanges Swift values with it (a copy of the state under a lock, posted work).
/// It does not touch the process's signals, and writes no state file and runs no
/// hooks unless asked to. Thresholds, probe URLs and validation modes come from the
/// `Configuration` (the same keys as the file).
// @unchecked Sendable: every mutable property is guarded by `lock`, and the agent is
// only reached through its loop's `post` (thread-safe) or after `pthread_join`.
public final class UplinkMonitor: @unchecked Sendable {
    private let configuration: Configuration
    private let loader: ConfigurationLoader?
    private let options: Agent.Options
    private let lock = Lock()
    private var latest: AgentState?
    private var agent: Agent?
    private var thread: pthread_t?
    private var continuations: [Int: AsyncStream<UplinkChange>.Continuation] = [:]
    private var nextContinuation = 0

    /// A monitor of `configuration`. Give `loader` (the file it came from) to let
    /// `reload()` read the file again.
    public init(configuration: Configuration, loader: ConfigurationLoader? = nil,
                writeStateFile: Bool = false, runHooks: Bool = false) {
        self.configuration = configuration
        self.loader = loader
        var options = Agent.Options()
        options.handleSignals = false
        options.writeStateFile = writeStateFile
        options.runHooks = runHooks
        self.options = options
    }

    deinit {
        stop()
    }

    /// Starts the agent's thread. Errors setting up netlink or curl are thrown here.
    public func start() throws {
        let agent = try Agent(configuration: configuration, options: options, loader: loader)
        agent.observe { [weak self] state, events in self?.publish(state, events) }
        lock.withLock { self.agent = agent }
        let box = Unmanaged.passRetained(ThreadBody {
            do { try agent.run() } catch { Log.error("monitor: \(error)") }
        })
        var handle = pthread_t()
        let created = pthread_create(&handle, nil, { raw in
            let body = Unmanaged<ThreadBody>.fromOpaque(raw!).takeRetainedValue()
            body.run()
            return nil
        }, box.toOpaque())
        guard created == 0 else {
            box.release()
            throw SystemError("pthread_create", errno: created)
        }
        thread = handle
    }

    /// Stops the agent and waits for its thread; ends every `changes` sequence.
    public func stop() {
        guard let agent, let thread else { return }
        agent.requestStop()
        pthread_join(thread, nil)
        self.thread = nil
        let ending = lock.withLock {
            self.agent = nil
            defer { continuations.removeAll() }
            return Array(continuations.values)
        }
        for continuation in ending { continuation.finish() }
    }

    /// Reads the configuration file again, as HUP does for the daemon; an invalid file
    /// is logged and the running configuration kept.
    public func reload() {
        guard let agent = runningAgent() else { return }
        agent.post { agent.reload() }
    }

    /// Switches to `configuration` (already validated, e.g. by `ConfigurationParser`);
    /// verdicts and byte counts carry over.
    public func reload(configuration: Configuration) {
        guard let agent = runningAgent() else { return }
        agent.post { agent.apply(configuration) }
    }

    private func runningAgent() -> Agent? {
        lock.withLock { agent }
    }

    /// The latest state (nil before the agent looked at the links).
    public var current: AgentState? {
        lock.withLock { latest }
    }

    /// Verdict of the best uplink of a kind (e.g. "is there working Wi-Fi?").
    public func verdict(for kind: InterfaceKind) -> Verdict? {
        current?.uplinks.filter { $0.kind == kind }.map(\.verdict).max()
    }

    /// Connected through an uplink of this kind, but without internet (captive or
    /// limited), and no uplink of the kind is online.
    public func isConnectedWithoutInternet(via kind: InterfaceKind) -> Bool {
        guard let verdict = verdict(for: kind) else { return false }
        return verdict == .captive || verdict == .limited
    }

    /// Every change from now on, until `stop()`.
    public var changes: AsyncStream<UplinkChange> {
        AsyncStream { continuation in
            let key = lock.withLock {
                defer { nextContinuation += 1 }
                continuations[nextContinuation] = continuation
                return nextContinuation
            }
            continuation.onTermination = { [weak self] _ in
                guard let self else { return }
                _ = self.lock.withLock { self.continuations.removeValue(forKey: key) }
            }
        }
    }

    /// A one-off check of some interfaces, as `uplinkd check` does, off the caller's
    /// thread.
    public static func check(_ interfaces: [InterfaceName], configuration: Configuration) async throws -> [RoundReport] {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[RoundReport], Error>) in
            let box = Unmanaged.passRetained(ThreadBody {
                do {
                    continuation.resume(returning: try CheckRunner(configuration: configuration).run(interfaces))
                } catch {
                    continuation.resume(throwing: error)
                }
            })
            var handle = pthread_t()
            let created = pthread_create(&handle, nil, { raw in
                Unmanaged<ThreadBody>.fromOpaque(raw!).takeRetainedValue().run()
                return nil
            }, box.toOpaque())
            if created == 0 {
                pthread_detach(handle)
            } else {
                box.release()
                continuation.resume(throwing: SystemError("pthread_create", errno: created))
            }
        }
    }

    private func publish(_ state: AgentState, _ events: [HookEvent]) {
        let targets = lock.withLock {
            latest = state
            return Array(continuations.values)
        }
        let change = UplinkChange(state: state, events: events)
        for continuation in targets { continuation.yield(change) }
    }
}

/// A closure handed to a new pthread (retained across the C boundary, released there).
/// SIGPIPE is blocked on that thread: writing to a validator that exited then gives
/// EPIPE instead of killing the embedding program (the process's own signal setup is
/// left alone).
private final class ThreadBody {
    private let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }

    func run() {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &set, nil)
        body()
    }
}
