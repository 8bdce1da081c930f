import Glibc
import UplinkCore

/// `uplinkd run`: wires the core to the world on one event loop that owns the link
/// source, the probes' sockets and timers, the signalfd and the hook and validator
/// children. No other thread touches any of it. The adapters come in through
/// `AgentAdapters`, so tests can drive this class with fakes and a manual clock.
///
/// The agent keeps its life (start, reload, stop) and the perform loop: the core's
/// actions carried out, the state published, the next wake-up set. Collaborators own
/// their state and timers: `LinkIntake`, `ModemDriver`, `PlanKeeper`, `JournalKeeper`,
/// `RoutingGuardDriver`, `FlowDriver`, `ServiceNotifications` (systemd), `TrafficSampler` (the
/// primary's counters) and `StateObservers` (the embedding API, MQTT).
package final class Agent {
    package let loop: EventLoop
    let options: Options
    /// Reads the configuration again on HUP; nil when it came from elsewhere.
    private let loader: ConfigurationLoader?
    private(set) var configuration: Configuration
    let adapters: AgentAdapters
    private let rounds: RoundRunner
    private let stateWriter: StateWriter?
    /// The Prometheus textfile (`[export] prometheus-textfile`), when one is set.
    private let metrics = MetricsExporter()
    private(set) var links: LinkSource?
    private var signals: SignalSource?
    /// The decisions. Collaborators ask it and act on its actions, on the loop.
    var core: AgentCore
    private var wakeTimer: EventLoop.TimerID?
    /// Where the agent is in its life: it takes in links, rounds and hook results
    /// until a stop begins; stopping, it lets the running hook finish and runs the stop
    /// event; stopped, the final state is written and the loop ends.
    private enum Life { case running, stopping, stopped }
    private var life = Life.running
    var isRunning: Bool { life == .running }
    private let observers = StateObservers()
    private lazy var intake = LinkIntake(agent: self)
    private var plans: PlanKeeper?
    private var journal: JournalKeeper?
    private lazy var routing = RoutingGuardDriver(agent: self)
    private(set) lazy var flows = FlowDriver(agent: self)
    private lazy var service = ServiceNotifications(agent: self, notifier: options.notifySystemd ? SystemdNotifier() : nil)
    private(set) lazy var sampler = TrafficSampler(agent: self)
    private lazy var modems = ModemDriver(agent: self)

    /// An agent on a loop of its own with the Linux adapters.
    package convenience init(configuration: Configuration, options: Options,
                            loader: ConfigurationLoader?) throws(AdapterError) {
        let loop: EventLoop
        do {
            loop = try EventLoop()
            // Before any other thread can hold the agent, so `requestStop` always works.
            try loop.enableCrossThreadPosting()
        } catch {
            throw .system(error)
        }
        self.init(configuration: configuration, options: options, loader: loader, loop: loop,
                  adapters: try .linux(loop: loop, configuration: options.applied(to: configuration)))
    }

    package init(configuration: Configuration, options: Options, loader: ConfigurationLoader?,
                loop: EventLoop, adapters: AgentAdapters) {
        self.options = options
        self.loader = loader
        self.loop = loop
        self.adapters = adapters
        let configuration = options.applied(to: configuration)
        self.configuration = configuration
        rounds = RoundRunner(loop: loop, prober: adapters.prober, resolver: adapters.resolver, files: adapters.files,
                             validator: adapters.validator)
        stateWriter = options.writeStateFile ? StateWriter(path: configuration.agent.stateFilePath) { [loop] in loop.nowMilliseconds } : nil
        core = AgentCore(configuration: configuration)
        applyLogLevel()
        adapters.hooks.onEventFinished = { [unowned self] event in hookEventFinished(event) }
    }

    /// Called on the loop after every change of the published state, with the hook
    /// events of that change.
    package func observe(_ observer: @escaping (AgentState, [HookEvent]) -> Void) {
        observers.observe(observer)
    }

    /// Called on the loop with the outage journal's records as they are appended
    /// (numbered), from the start's gap on; only an agent that keeps a journal has any.
    package func observeJournal(_ observer: @escaping ([JournalRecord]) -> Void) {
        observers.observeJournal(observer)
    }

    /// The journal's file, when this agent keeps one on disk.
    package var journalPath: String? { options.keepsJournal ? configuration.agent.journal.path : nil }

    /// Called on the loop at a stop, after the final state was written and the hooks
    /// ran, with that state and the stop event; the loop ends when every such
    /// observer called its completion, or after `stopObserverTimeoutMilliseconds`.
    package func onStop(_ observer: @escaping (AgentState, HookEvent?, @escaping () -> Void) -> Void) {
        observers.onStop(observer)
    }

    /// Most time the stop waits for its observers.
    package static let stopObserverTimeoutMilliseconds = 3_000

    /// Sets up signals and the link source and takes the first look at the links;
    /// the loop then does the rest (`run`, or a test advancing time).
    package func start() throws(AdapterError) {
        do { try stateWriter?.prepare() } catch { throw .system(error) }
        do {
            if options.handleSignals {
                signals = try SignalSource(loop: loop, signals: [SIGTERM, SIGINT, SIGHUP, SIGUSR1]) { [unowned self] in signalArrived($0) }
            }
        } catch {
            throw .system(error)
        }
        let source = try adapters.links(loop, configuration.netlinkReceiveBufferBytes) { [unowned self] events, _, links in
            linksChanged(links, events: events)
        }
        links = source
        plans = PlanKeeper(agent: self)
        if options.keepsJournal {
            let keeper = JournalKeeper(agent: self)
            keeper.onRecorded = { [unowned self] records in observers.recorded(records) }
            journal = keeper
            keeper.start()
        }
        let hooks = options.runHooks ? "\(configuration.agent.hooksDirectory) and \(configuration.agent.vendorHooksDirectory)" : "nowhere"
        Log.notice("started; state file \(stateWriter?.path ?? "none"), hooks from \(hooks)")
        routing.start(source)
        flows.start()
        service.start()
        linksChanged(source.links, events: [])
    }

    private func signalArrived(_ signal: Int32) {
        switch signal {
        case SIGHUP: reload()
        case SIGUSR1: plans?.takeRequests()
        default: stop(reason: signal == SIGTERM ? "TERM" : "INT")
        }
    }

    /// Resets an uplink's data plan: a new cycle from now (the embedding API's
    /// `uplinkd plan --reset`). Call on the loop; false when it has no plan.
    @discardableResult
    package func resetPlan(_ name: InterfaceName) -> Bool {
        plans?.reset(name) ?? false
    }

    /// Runs until TERM or INT (or `requestStop`); returns after the final state was written.
    package func run() throws(AdapterError) {
        try start()
        do { try loop.run() } catch { throw .system(error) }
        links = nil
        signals = nil
        modems.close()
    }

    /// Asks a running agent to stop as on TERM; safe from any thread.
    package func requestStop() {
        loop.post { [weak self] in self?.stop(reason: "requested") }
    }

    /// Runs `work` on the agent's loop (from any thread).
    package func post(_ work: @escaping () -> Void) {
        loop.post(work)
    }

    /// Stops as on TERM: lets a running hook finish, writes the final state, ends the
    /// loop. Call on the loop.
    package func stop(reason: String) {
        guard life == .running else { return }
        life = .stopping
        service.stopping()
        Log.notice("stopping (\(reason)); letting a running hook finish")
        modems.stop()
        if let wakeTimer { loop.cancel(wakeTimer) }
        wakeTimer = nil
        sampler.cancel()
        routing.stop()
        var finalEvent = options.runHooks ? core.numbered(core.stopEvent(now: now())) : nil
        finalEvent?.configurationPath = loader?.explicitPath
        adapters.hooks.drain(finalEvent: finalEvent) { [unowned self] in
            routing.finish()
            flows.finish()
            plans?.finish()
            journal?.finish()
            let final = core.state(now: now(), pid: Int(getpid()), stopped: true)
            stateWriter?.publish(final, format: configuration.agent.stateFileFormat)
            exportMetrics(final, events: [])
            life = .stopped
            observers.stopped(final, event: finalEvent, thenStop: loop, timeoutMilliseconds: Agent.stopObserverTimeoutMilliseconds)
        }
    }

    /// Reads the configuration file again (HUP); an invalid one is refused and the
    /// running one kept. Call on the loop.
    package func reload() {
        guard isRunning else { return }
        guard let loader else { return Log.error("reload refused: this agent was given its configuration, not a file") }
        service.reloading()
        do {
            apply(try loader.load())
        } catch {
            Log.error("reload refused, keeping the running configuration: \(error)")
        }
        service.reloaded(core.state(now: now(), pid: Int(getpid())))
    }

    /// Takes a new, already validated configuration; verdicts and budgets carry over.
    /// Call on the loop.
    package func apply(_ fresh: Configuration) {
        var updated = options.applied(to: fresh)
        for kept in updated.keepRestartOnlySettings(of: configuration) { Log.kept(kept) }
        configuration = updated
        applyLogLevel()
        intake.forget()
        adapters.hooks.reconfigure(directories: HookDirectories(updated.agent),
                                   timeoutMilliseconds: updated.agent.hookTimeoutMilliseconds)
        core.reconfigure(updated)
        Log.notice("configuration reloaded")
        if let links { linksChanged(links.links, events: []) }
    }

    // MARK: inputs

    func linksChanged(_ allLinks: [Int: LinkFacts], events allEvents: [LinkEvent]) {
        guard isRunning else { return }
        let (uplinks, events) = intake.take(allLinks, events: allEvents)
        for event in events { Log.info("link: \(LinkReport.humanLine(event))") }
        perform(core.linksChanged(uplinks: uplinks, events: events, now: now()))
        // After the look at the links: the modems' first word (even "no ModemManager")
        // must not be taken for a settled start with no uplinks.
        modems.startIfWanted()
    }

    private func roundFinished(_ report: RoundReport, generation: Int) {
        guard isRunning else { return }
        Log.debug("round on \(report.interface): \(report.humanLine) (\(report.purpose.rawValue) round)")
        perform(core.roundFinished(report, generation: generation, now: now()))
    }

    /// Every hook of one event has run.
    private func hookEventFinished(_ event: HookEvent) {
        // The hooks caught up by one event: the pending gauge changed (the state is
        // built only when a textfile wants it: this runs after every hook event).
        // The state file says so (`hooks_done`), for readers waiting on the effect.
        if isRunning {
            let state = publishedState()
            stateWriter?.publish(state, format: configuration.agent.stateFileFormat)
            if configuration.export.prometheusTextfilePath != nil { exportMetrics(state, events: []) }
        }
        // Not from inside the runner's call (which may come from within a netlink
        // batch being handled): on the loop's next turn.
        let kind = event.kind
        loop.schedule(afterMilliseconds: 0) { [weak self] in self?.routing.hookEventFinished(kind) }
        // A hook told of a portal may have logged in (the portal-login hook): look
        // again at once instead of at the next scheduled round.
        guard isRunning, event.kind == .verdict, event.verdict == .captive, let interface = event.interface else { return }
        Log.info("\(interface): hooks done for the portal; probing again")
        perform(core.probeNow(interface, now: now()))
    }

    // MARK: actions

    func perform(_ actions: [AgentCore.Action]) {
        var hookEvents: [HookEvent] = []
        for action in actions {
            switch action {
            case .startRound(let plan, let generation):
                Log.debug("round on \(plan.interface): starts (\(plan.purpose.rawValue) round, \(plan.timeoutMilliseconds) ms limit)")
                rounds.run(plan) { [weak self] report in self?.roundFinished(report, generation: generation) }
            case .runHook(let decided):
                var event = core.numbered(decided)
                event.configurationPath = loader?.explicitPath
                Log.event(event)
                hookEvents.append(event)
                if options.runHooks { adapters.hooks.enqueue(event) }
            case .note(let note):
                Log.note(note)
            case .recoverModem(let equipmentID, let step):
                modems.recover(equipmentID, step)
            case .savePlans:
                plans?.save()
            case .standbyBearer(let equipmentID, let connected):
                modems.setBearer(equipmentID, connected: connected)
            }
        }
        var state = publishedState()
        let closed = journal?.observe(state, events: hookEvents) ?? []
        if !closed.isEmpty {
            metrics.count(closed)
            let outages = closed.filter { $0.kind == .site }.map(outageEvent)
            if !outages.isEmpty {
                hookEvents += outages
                state = publishedState()
            }
        }
        stateWriter?.publish(state, format: configuration.agent.stateFileFormat)
        exportMetrics(state, events: hookEvents)
        service.stateChanged(state)
        routing.stateChanged(state)
        flows.stateChanged()
        if !hookEvents.isEmpty || !actions.isEmpty { observers.changed(state, events: hookEvents) }
        scheduleWake()
        sampler.schedule()
        plans?.schedule()
    }

    /// A site outage the journal closed, told to the hooks once (after the primary
    /// event that ended it, so a notifying hook finds the route back).
    private func outageEvent(_ record: JournalRecord) -> HookEvent {
        var event = core.numbered(core.outageEvent(record, now: now()))
        event.configurationPath = loader?.explicitPath
        Log.event(event)
        if options.runHooks { adapters.hooks.enqueue(event) }
        return event
    }

    /// The core's state with how far the hooks caught up (all of it when hooks do not run).
    private func publishedState() -> AgentState {
        core.state(now: now(), pid: Int(getpid())) { [adapters, options] latest in
            options.runHooks ? adapters.hooks.caughtUp(latest: latest) : latest
        }
    }

    private func scheduleWake() {
        if let wakeTimer { loop.cancel(wakeTimer) }
        wakeTimer = nil
        guard isRunning, let wake = core.nextWakeMilliseconds() else { return }
        wakeTimer = loop.schedule(afterMilliseconds: max(0, wake - loop.nowMilliseconds)) { [weak self] in
            guard let self else { return }
            wakeTimer = nil
            perform(core.tick(now: now()))
        }
    }

    private func exportMetrics(_ state: AgentState, events: [HookEvent]) {
        metrics.publish(state, events: events, probeBytes: core.probeBytesTotals, stallAlarms: core.stallAlarmTotals,
                        hookEventsPending: adapters.hooks.pendingEvents, nowMilliseconds: loop.nowMilliseconds,
                        to: configuration.export.prometheusTextfilePath)
    }

    private func applyLogLevel() {
        guard options.setsLogLevel else { return }
        let configured = configuration.agent.logLevel
        Log.threshold = min(options.logLevelOverride ?? configured, configured)
    }

    func now() -> Instant {
        Instant(monotonicMilliseconds: loop.nowMilliseconds, wallSeconds: loop.time.wallSeconds)
    }
}
