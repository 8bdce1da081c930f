import Glibc
import UplinkCore

/// Runs the hooks (see `HookDirectories`) on every hook event: in name order, one
/// at a time, never through a shell, the facts in the environment, each with a time
/// limit (TERM, then KILL), output logged under the hook's name. A hook that is not
/// executable, fails or times out is logged and skipped; it never stops the agent.
package final class HookRunner: HookSink {
    private let loop: EventLoop
    package private(set) var directories: HookDirectories
    package private(set) var timeoutMilliseconds: Int
    private var queue = HookQueue()
    /// The event being handled and the hooks still to run for it.
    private var current: (event: HookEvent, remaining: [String])?
    private var running: ChildProcess?
    private var onIdle: (() -> Void)?
    /// Draining for a stop: nothing more is taken but the final event.
    private var draining = false
    /// Called on the loop when every hook of an event has run.
    package var onEventFinished: ((HookEvent) -> Void)?

    package init(loop: EventLoop, directories: HookDirectories, timeoutMilliseconds: Int) {
        self.loop = loop
        self.directories = directories
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    package func reconfigure(directories: HookDirectories, timeoutMilliseconds: Int) {
        self.directories = directories
        self.timeoutMilliseconds = timeoutMilliseconds
        reportedProblems = []  // a reload says again what still will not run
    }

    package var pendingEvents: Int { queue.pending.count + (current == nil ? 0 : 1) }

    package func caughtUp(latest: Int) -> Int {
        queue.caughtUp(running: current?.event, latest: latest)
    }

    package func enqueue(_ event: HookEvent) {
        guard !draining else { return }
        queue.enqueue(event)
        startNext()
    }

    /// Stops taking events: queued ones are dropped, a running hook may finish within
    /// its limit, the hooks run for `finalEvent`, then `completion` runs.
    package func drain(finalEvent: HookEvent?, then completion: @escaping () -> Void) {
        if !queue.isEmpty { Log.info("dropping \(queue.pending.count) queued hook event(s) at shutdown") }
        draining = true
        queue = HookQueue()
        if let finalEvent { queue.enqueue(finalEvent) }
        current?.remaining = []
        onIdle = completion
        startNext()
    }

    private func startNext() {
        while running == nil {
            if current == nil || current!.remaining.isEmpty {
                // Done with it before anyone hears so (the pending count excludes it);
                // the listener may enqueue, which may start the next event itself.
                let finished = current?.event
                current = nil
                if let finished { onEventFinished?(finished) }
                if running != nil || current != nil { return }
                if let event = queue.next() {
                    current = (event, hookPaths())
                    continue
                }
                if let onIdle {
                    self.onIdle = nil
                    onIdle()
                }
                return
            }
            let path = current!.remaining.removeFirst()
            start(path, for: current!.event)
        }
    }

    private func start(_ path: String, for event: HookEvent) {
        // A file name may hold any byte but '/', and it starts each line logged of the hook.
        let name = String(path.split(separator: "/").last ?? "").printableEscaped
        // Checked when the event began, maybe minutes ago (earlier hooks ran since):
        // the file must still be one that may run.
        if case .refused(let why) = HookDirectories.check(path) {
            Log.warning("hook \(path.printableEscaped) \(why); skipped")
            return
        }
        let environment = event.environment + [ChildProcess.searchPath]
        switch event.kind {
        case .verdict:
            Log.info("hook \(name): verdict \(event.interface?.value ?? "-") \(event.previousVerdict.rawValue) -> \(event.verdict.rawValue)")
        case .primary:
            Log.info("hook \(name): primary \(event.previousPrimary?.value ?? "none") -> \(event.primary?.value ?? "none")")
        case .stop:
            Log.info("hook \(name): stop")
        case .repair:
            Log.info("hook \(name): repair (primary \(event.primary?.value ?? "none"))")
        case .recover:
            Log.info("hook \(name): recover \(event.interface?.value ?? "-") \(event.recoveryStep?.rawValue ?? "-")")
        case .plan:
            Log.info("hook \(name): plan \(event.interface?.value ?? "-") \(event.planThreshold.map { "\($0)" } ?? "-")")
        case .outage:
            Log.info("hook \(name): outage of \(event.outage.map { $0.durationMilliseconds } ?? 0) ms ended (primary \(event.primary?.value ?? "none"))")
        }
        do {
            running = try ChildProcess(
                loop: loop, name: "hook \(name)", arguments: [path], environment: environment,
                timeoutMilliseconds: timeoutMilliseconds,
                onLine: { line in Log.notice("hook \(name): \(line)") },
                completion: { [weak self] termination in
                    if termination.status != 0 {
                        Log.warning("hook \(name) failed (exit status \(termination.status)\(termination.timedOut ? ", timed out" : ""))")
                    }
                    self?.running = nil
                    self?.startNext()
                })
        } catch {
            Log.warning("hook \(name) could not start: \(error)")
        }
    }

    /// What the last survey found wrong: logged when it changes, not at every event.
    private var reportedProblems: [String] = []

    /// The hooks to run for one event, in name order; what will not run is logged.
    func hookPaths() -> [String] {
        let survey = directories.survey()
        for problem in survey.problems where !reportedProblems.contains(problem) { Log.warning(problem) }
        reportedProblems = survey.problems
        return survey.hooks
    }
}
