import Glibc
import UplinkCore

/// Runs the executables of the hooks directory on every hook event: in name order, one
/// at a time, never through a shell, the facts in the environment, each with a time
/// limit (TERM, then KILL), output logged under the hook's name. A hook that is not
/// executable, fails or times out is logged and skipped; it never stops the agent.
public final class HookRunner: HookSink {
    private let loop: EventLoop
    public private(set) var directory: String
    public private(set) var timeoutMilliseconds: Int
    private var queue = HookQueue()
    /// The event being handled and the hooks still to run for it.
    private var current: (event: HookEvent, remaining: [String])?
    private var running: ChildProcess?
    private var onIdle: (() -> Void)?
    /// Called on the loop when every hook of an event has run.
    public var onEventFinished: ((HookEvent) -> Void)?

    public init(loop: EventLoop, directory: String, timeoutMilliseconds: Int) {
        self.loop = loop
        self.directory = directory
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    public func reconfigure(directory: String, timeoutMilliseconds: Int) {
        self.directory = directory
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    public func enqueue(_ event: HookEvent) {
        queue.enqueue(event)
        startNext()
    }

    /// Stops taking events: queued ones are dropped, a running hook may finish within
    /// its limit, then `completion` runs.
    public func drain(then completion: @escaping () -> Void) {
        if !queue.isEmpty { Log.info("dropping \(queue.pending.count) queued hook event(s) at shutdown") }
        queue = HookQueue()
        current?.remaining = []
        if running == nil {
            current = nil
            completion()
        } else {
            onIdle = completion
        }
    }

    private func startNext() {
        while running == nil {
            if current == nil || current!.remaining.isEmpty {
                if let finished = current?.event { onEventFinished?(finished) }
                current = nil
                if let onIdle {
                    self.onIdle = nil
                    onIdle()
                    return
                }
                guard let event = queue.next() else { return }
                current = (event, hookPaths())
                continue
            }
            let path = current!.remaining.removeFirst()
            start(path, for: current!.event)
        }
    }

    private func start(_ path: String, for event: HookEvent) {
        let name = String(path.split(separator: "/").last ?? "")
        let environment = event.environment + [ChildProcess.searchPath]
        Log.info("hook \(name): \(event.kind.rawValue) \(event.interface) \(event.previousVerdict.rawValue) -> \(event.verdict.rawValue)")
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

    /// Executable regular files of the directory in name order; editor backups,
    /// dpkg leftovers and hidden files are skipped, non-executables are logged.
    func hookPaths() -> [String] {
        let survey = HookRunner.survey(directory)
        for problem in survey.problems { Log.warning(problem) }
        return survey.hooks
    }

    /// What the directory holds: the hooks that will run, in order, and sentences about
    /// what will not (`uplinkd config check` prints them; the runner logs them).
    public static func survey(_ directory: String) -> (hooks: [String], problems: [String]) {
        let entries: [String]
        do {
            entries = try SmallFile.directoryEntries(directory)
        } catch {
            return ([], error.errno == ENOENT ? [] : ["hooks directory: \(error)"])
        }
        let names = entries.filter { name in
            !(name.hasSuffix("~") || name.contains(".dpkg-") || name.hasSuffix(".ucf-dist"))
        }
        var problems: [String] = []
        let hooks = names.sorted(by: { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }).compactMap { name -> String? in
            let path = "\(directory)/\(name)"
            var info = stat()
            guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
            guard access(path, X_OK) == 0 else {
                problems.append("hook \(name.printableEscaped) is not executable; skipped")
                return nil
            }
            return path
        }
        return (hooks, problems)
    }
}
