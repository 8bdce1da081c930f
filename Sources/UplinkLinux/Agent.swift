import Glibc
import UplinkCore

/// `uplinkd run`: wires the core to the world on one event loop that owns the netlink
/// socket, the curl sockets and timers, the signalfd and the hook and validator
/// children. No other thread touches any of it.
public final class Agent {
    /// Where the configuration comes from, so HUP can read it again.
    public struct Options {
        public var configPath: String?
        public var stateFileOverride: String?
        public var hooksDirectoryOverride: String?
        /// TERM/INT stop and HUP reloads (the daemon); an embedding program keeps its
        /// signals and calls `requestStop`.
        public var handleSignals = true
        /// Publish the state file (an embedding program may only want the API).
        public var writeStateFile = true
        /// Run hooks from the hooks directory.
        public var runHooks = true

        public init(configPath: String?, stateFileOverride: String?, hooksDirectoryOverride: String?) {
            self.configPath = configPath
            self.stateFileOverride = stateFileOverride
            self.hooksDirectoryOverride = hooksDirectoryOverride
        }
    }

    /// Reads and validates the configuration; the agent keeps the old one on failure.
    public typealias ConfigurationLoader = (String?) throws(ConfigurationError) -> Configuration

    private let options: Options
    private let loadConfiguration: ConfigurationLoader
    private var configuration: Configuration
    private let loop: EventLoop
    private let prober: HTTPProber
    private let rounds: RoundRunner
    private let hooks: HookRunner
    private let stateWriter: StateWriter?
    private var tracker: LinkTracker?
    private var signals: SignalSource?
    private var core: AgentCore
    private let kindReader = SysfsKindReader()
    /// Kinds by interface index, read from sysfs once per interface (and name): every
    /// netlink batch re-selects the uplinks, and sysfs does not change under them.
    private var kinds: [Int: (name: InterfaceName, kind: InterfaceKind)] = [:]
    private var wakeTimer: EventLoop.TimerID?
    private var stopping = false
    /// Observers of state changes (the embedding API); called on the loop.
    private var observers: [(AgentState, [HookEvent]) -> Void] = []

    public init(configuration: Configuration, options: Options,
                loadConfiguration: @escaping ConfigurationLoader) throws(AdapterError) {
        self.options = options
        self.loadConfiguration = loadConfiguration
        var configuration = configuration
        Agent.applyOverrides(options, to: &configuration)
        self.configuration = configuration
        do {
            loop = try EventLoop()
            // Before any other thread can hold the agent, so `requestStop` always works.
            try loop.enableCrossThreadPosting()
        } catch {
            throw .system(error)
        }
        do { prober = try HTTPProber(loop: loop) } catch { throw .curl(error) }
        rounds = RoundRunner(loop: loop, prober: prober, resolver: DNSResolver(loop: loop))
        hooks = HookRunner(loop: loop, directory: configuration.agent.hooksDirectory,
                           timeoutMilliseconds: configuration.agent.hookTimeoutMilliseconds)
        stateWriter = options.writeStateFile ? StateWriter(path: configuration.agent.stateFilePath) : nil
        core = AgentCore(policy: configuration.agent, interfaceSettings: configuration.interfaceSettings)
        // A hook told of a portal may have logged in (the portal-login hook): look
        // again at once instead of at the next scheduled round.
        hooks.onEventFinished = { [unowned self] event in
            guard !stopping, event.kind == .verdict, event.verdict == .captive else { return }
            Log.info("\(event.interface): hooks done for the portal; probing again")
            perform(core.probeNow(event.interface, now: now()))
        }
    }

    /// Called on the loop after every change of the published state, with the hook
    /// events of that change.
    public func observe(_ observer: @escaping (AgentState, [HookEvent]) -> Void) {
        observers.append(observer)
    }

    /// Runs until TERM or INT (or `requestStop`); returns after the final state was written.
    public func run() throws(AdapterError) {
        do {
            if options.handleSignals {
                signals = try SignalSource(loop: loop, signals: [SIGTERM, SIGINT, SIGHUP]) { [unowned self] signal in
                    if signal == SIGHUP { reload() } else { stop(reason: signal == SIGTERM ? "TERM" : "INT") }
                }
            }
        } catch {
            throw .system(error)
        }
        do {
            tracker = try LinkTracker(loop: loop, receiveBufferBytes: configuration.netlinkReceiveBufferBytes) {
                [unowned self] events, _, links in
                linksChanged(links, events: events)
            }
        } catch {
            throw .netlink(error)
        }
        Log.notice("started; state file \(stateWriter?.path ?? "none"), hooks from \(options.runHooks ? hooks.directory : "nowhere")")
        linksChanged(tracker!.links, events: [])
        do { try loop.run() } catch { throw .system(error) }
        tracker = nil
        signals = nil
    }

    /// Asks a running agent to stop as on TERM; safe from any thread.
    public func requestStop() {
        loop.post { [weak self] in self?.stop(reason: "requested") }
    }

    /// Runs `work` on the agent's loop (from any thread).
    public func post(_ work: @escaping () -> Void) {
        loop.post(work)
    }

    /// Stops as on TERM; call on the loop.
    func stop(reason: String) {
        guard !stopping else { return }
        stopping = true
        Log.notice("stopping (\(reason)); letting a running hook finish")
        if let wakeTimer { loop.cancel(wakeTimer) }
        hooks.drain { [unowned self] in
            stateWriter?.publish(core.state(now: now(), pid: Int(getpid()), stopped: true))
            loop.stop()
        }
    }

    // MARK: inputs

    private func linksChanged(_ links: [Int: LinkFacts], events: [LinkEvent]) {
        guard !stopping else { return }
        let selection = configuration.uplinkSelection
        var uplinks: [(facts: LinkFacts, kind: InterfaceKind)] = []
        kinds = kinds.filter { links[$0.key]?.name == $0.value.name }
        for facts in links.values.sorted(by: { $0.index < $1.index }) {
            let kind = kinds[facts.index]?.kind
                ?? kindReader.kind(of: facts.name, configured: configuration.interfaceKinds[facts.name.value])
            kinds[facts.index] = (facts.name, kind)
            if selection.isUplink(facts, kind: kind) { uplinks.append((facts, kind)) }
        }
        for event in events { Log.info("link: \(LinkReport.humanLine(event))") }
        perform(core.linksChanged(uplinks: uplinks, events: events, now: now()))
    }

    private func roundFinished(_ report: CheckReport, generation: Int) {
        guard !stopping else { return }
        Log.debug("round on \(report.interface): \(report.humanLine)")
        perform(core.roundFinished(report, generation: generation, now: now()))
    }

    private func reload() {
        let fresh: Configuration
        do {
            fresh = try loadConfiguration(options.configPath)
        } catch {
            Log.error("reload refused, keeping the running configuration: \(error)")
            return
        }
        var updated = fresh
        Agent.applyOverrides(options, to: &updated)
        if updated.agent.stateFilePath != configuration.agent.stateFilePath {
            Log.warning("state-file changes take effect at restart; still writing \(configuration.agent.stateFilePath)")
            updated.agent.stateFilePath = configuration.agent.stateFilePath
        }
        configuration = updated
        kinds = [:]  // `[interface NAME] kind` may have changed
        hooks.directory = updated.agent.hooksDirectory
        hooks.timeoutMilliseconds = updated.agent.hookTimeoutMilliseconds
        core.reconfigure(policy: updated.agent, interfaceSettings: updated.interfaceSettings)
        Log.notice("configuration reloaded")
        if let tracker { linksChanged(tracker.links, events: []) }
    }

    // MARK: actions

    private func perform(_ actions: [AgentCore.Action]) {
        var hookEvents: [HookEvent] = []
        for action in actions {
            switch action {
            case .startRound(let name, let families, let generation):
                startRound(name, families: families, generation: generation)
            case .runHook(let event):
                if event.kind == .verdict {
                    Log.notice("\(event.interface): \(event.previousVerdict.rawValue) -> \(event.verdict.rawValue) (\(event.reason))")
                } else {
                    Log.notice("primary: \(event.previousPrimary ?? "none") -> \(event.primary ?? "none")")
                }
                hookEvents.append(event)
                if options.runHooks { hooks.enqueue(event) }
            }
        }
        let state = core.state(now: now(), pid: Int(getpid()))
        stateWriter?.publish(state)
        if !hookEvents.isEmpty || !actions.isEmpty {
            for observer in observers { observer(state, hookEvents) }
        }
        scheduleWake()
    }

    private func startRound(_ name: InterfaceName, families: [AddressFamily], generation: Int) {
        let link = LinkEvaluator.Result.probe(families)
        let requests = CheckPlanner.requests(for: name, link: link, probes: configuration.probes)
        let kind = core.kind(of: name.value) ?? .other
        let threshold = configuration.successThresholdPercent
        let started = MonotonicClock.nowMilliseconds()
        // Servers are looked up again every round: a DHCP renewal may have changed them.
        let index = tracker?.links.first { $0.value.name == name }?.key ?? 0
        let servers = DNSServerFinder(settings: configuration.dns).servers(for: name, index: index)
        rounds.run(requests, dns: RoundDNS(servers: servers, settings: configuration.dns),
                   settings: ProbeSettings(configuration: configuration),
                   validatorTimeoutMilliseconds: configuration.validatorTimeoutMilliseconds) { [weak self] round in
            let report = CheckPlanner.report(interface: name, kind: kind, link: link, results: round.probes,
                                             thresholdPercent: threshold,
                                             elapsedMilliseconds: MonotonicClock.nowMilliseconds() - started,
                                             dns: servers, knownAnswers: round.knownAnswers)
            self?.roundFinished(report, generation: generation)
        }
    }

    private func scheduleWake() {
        if let wakeTimer { loop.cancel(wakeTimer) }
        wakeTimer = nil
        guard !stopping, let wake = core.nextWakeMilliseconds() else { return }
        let delay = max(0, wake - MonotonicClock.nowMilliseconds())
        wakeTimer = loop.schedule(afterMilliseconds: delay) { [weak self] in
            guard let self else { return }
            self.wakeTimer = nil
            self.perform(self.core.tick(now: self.now()))
        }
    }

    private func now() -> Instant {
        Instant(monotonicMilliseconds: MonotonicClock.nowMilliseconds(), wallSeconds: Int(time(nil)))
    }

    private static func applyOverrides(_ options: Options, to configuration: inout Configuration) {
        if let state = options.stateFileOverride { configuration.agent.stateFilePath = state }
        if let hooks = options.hooksDirectoryOverride { configuration.agent.hooksDirectory = hooks }
    }
}
