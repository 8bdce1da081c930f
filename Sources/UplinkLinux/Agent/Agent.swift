import Glibc
import UplinkCore

/// `uplinkd run`: wires the core to the world on one event loop that owns the link
/// source, the probes' sockets and timers, the signalfd and the hook and validator
/// children. No other thread touches any of it. The adapters come in through
/// `AgentAdapters`, so tests can drive this class with fakes and a manual clock.
public final class Agent {
    /// How the agent meets the process: signals, state file, hooks.
    public struct Options {
        public var stateFileOverride: String?
        public var hooksDirectoryOverride: String?
        /// TERM/INT stop and HUP reloads (the daemon); an embedding program keeps its
        /// signals and calls `requestStop`.
        public var handleSignals = true
        /// Publish the state file (an embedding program may only want the API).
        public var writeStateFile = true
        /// Run hooks from the hooks directory.
        public var runHooks = true
        /// Set the process's log threshold from `log-level` (the daemon; an embedding
        /// program keeps its own).
        public var setsLogLevel = false
        /// `--verbose`: the threshold is the more verbose of this and `log-level`.
        public var logLevelOverride: Log.Level?
        /// Tell systemd about readiness, status, reloads and the watchdog when it
        /// gave a notification socket (NOTIFY_SOCKET): the daemon only, since the
        /// socket belongs to the service's main process.
        public var notifySystemd = false
        /// Look after uplinkd's routing entries: remove leftovers at start and the
        /// entries at a stop (unless `keep-routes-on-stop`), and have the hooks repair
        /// them when someone else changes them. The daemon only: an embedding program
        /// must not remove the routes of the uplinkd running beside it.
        public var managesRouting = false

        public init(stateFileOverride: String? = nil, hooksDirectoryOverride: String? = nil) {
            self.stateFileOverride = stateFileOverride
            self.hooksDirectoryOverride = hooksDirectoryOverride
        }
    }

    public let loop: EventLoop
    private let options: Options
    /// Reads the configuration again on HUP; nil when it came from elsewhere.
    private let loader: ConfigurationLoader?
    private var configuration: Configuration
    private let adapters: AgentAdapters
    private let rounds: RoundRunner
    private let stateWriter: StateWriter?
    /// The Prometheus textfile (`[export] prometheus-textfile`), when one is set.
    private let metrics = MetricsExporter()
    private var links: LinkSource?
    private var signals: SignalSource?
    /// ModemManager's modems, when `modemmanager = yes`.
    private var modems: ModemSource?
    private var core: AgentCore
    /// Kinds by interface index, read once per interface (and name): every netlink
    /// batch re-selects the uplinks, and sysfs does not change under them.
    private var kinds: [Int: (name: InterfaceName, kind: InterfaceKind)] = [:]
    /// Whether each interface's DHCP lease says "metered", by index: read again when
    /// its addresses change (a new lease) and on reload.
    private var meteredLeases: [Int: Bool] = [:]
    private var wakeTimer: EventLoop.TimerID?
    /// The next sample of the primary's packet counters, and whose.
    private var sampleTimer: (id: EventLoop.TimerID, interface: InterfaceName)?
    /// Where the agent is in its life: it takes in links, rounds and hook results
    /// until a stop begins; stopping, it lets the running hook finish and runs the stop
    /// event; stopped, the final state is written and the loop ends.
    private enum Life { case running, stopping, stopped }
    private var life = Life.running
    private var isRunning: Bool { life == .running }
    /// systemd's notification socket, when it gave one.
    private let notifier: SystemdNotifier?
    /// READY=1 was sent (every uplink had a verdict, or `ready-timeout` passed).
    private var announcedReady = false
    /// Observers of state changes (the embedding API); called on the loop.
    private var observers: [(AgentState, [HookEvent]) -> Void] = []
    /// Told of the stop after the final state (with the stop event), before the loop
    /// ends; each calls its completion when done (the MQTT goodbye).
    private var stopObservers: [(AgentState, HookEvent?, @escaping () -> Void) -> Void] = []
    /// Watches uplinkd's routing entries for changes made behind its back.
    private var routeGuard = RouteGuard()
    private var repairTimer: EventLoop.TimerID?
    /// Data plans: the counters, the plan file, the reading timer.
    private var plans: PlanKeeper?

    /// An agent on a loop of its own with the Linux adapters.
    public convenience init(configuration: Configuration, options: Options,
                            loader: ConfigurationLoader?) throws(AdapterError) {
        let loop: EventLoop
        do {
            loop = try EventLoop()
            // Before any other thread can hold the agent, so `requestStop` always works.
            try loop.enableCrossThreadPosting()
        } catch {
            throw .system(error)
        }
        var configured = configuration
        Agent.applyOverrides(options, to: &configured)
        self.init(configuration: configuration, options: options, loader: loader, loop: loop,
                  adapters: try .linux(loop: loop, configuration: configured))
    }

    public init(configuration: Configuration, options: Options, loader: ConfigurationLoader?,
                loop: EventLoop, adapters: AgentAdapters) {
        self.options = options
        self.loader = loader
        self.loop = loop
        self.adapters = adapters
        var configuration = configuration
        Agent.applyOverrides(options, to: &configuration)
        self.configuration = configuration
        rounds = RoundRunner(loop: loop, prober: adapters.prober, resolver: adapters.resolver, files: adapters.files,
                             validator: adapters.validator)
        stateWriter = options.writeStateFile ? StateWriter(path: configuration.agent.stateFilePath) : nil
        notifier = options.notifySystemd ? SystemdNotifier() : nil
        core = AgentCore(configuration: configuration)
        applyLogLevel()
        // A hook told of a portal may have logged in (the portal-login hook): look
        // again at once instead of at the next scheduled round.
        adapters.hooks.onEventFinished = { [unowned self] event in
            // The hooks caught up by one event: the pending gauge changed (the state is
            // built only when a textfile wants it: this runs after every hook event).
            if isRunning && configuration.export.prometheusTextfilePath != nil {
                exportMetrics(core.state(now: now(), pid: Int(getpid())), events: [])
            }
            // Not from inside the runner's call (which may come from within a netlink
            // batch being handled): on the loop's next turn.
            let kind = event.kind
            loop.schedule(afterMilliseconds: 0) { [weak self] in self?.hookEventFinished(kind) }
            guard isRunning, event.kind == .verdict, event.verdict == .captive, let interface = event.interface else { return }
            Log.info("\(interface): hooks done for the portal; probing again")
            perform(core.probeNow(interface, now: now()))
        }
    }

    /// Called on the loop after every change of the published state, with the hook
    /// events of that change.
    public func observe(_ observer: @escaping (AgentState, [HookEvent]) -> Void) {
        observers.append(observer)
    }

    /// Called on the loop at a stop, after the final state was written and the hooks
    /// ran, with that state and the stop event; the loop ends when every such
    /// observer called its completion, or after `stopObserverTimeoutMilliseconds`.
    public func onStop(_ observer: @escaping (AgentState, HookEvent?, @escaping () -> Void) -> Void) {
        stopObservers.append(observer)
    }

    /// Most time the stop waits for its observers.
    public static let stopObserverTimeoutMilliseconds = 3_000

    /// Sets up signals and the link source and takes the first look at the links;
    /// the loop then does the rest (`run`, or a test advancing time).
    public func start() throws(AdapterError) {
        do { try stateWriter?.prepare() } catch { throw .system(error) }
        if options.handleSignals {
            do {
                signals = try SignalSource(loop: loop, signals: [SIGTERM, SIGINT, SIGHUP, SIGUSR1]) { [unowned self] signal in
                    switch signal {
                    case SIGHUP: reload()
                    case SIGUSR1: takePlanRequests()
                    default: stop(reason: signal == SIGTERM ? "TERM" : "INT")
                    }
                }
            } catch {
                throw .system(error)
            }
        }
        let source = try adapters.links(loop, configuration.netlinkReceiveBufferBytes) { [unowned self] events, _, links in
            linksChanged(links, events: events)
        }
        links = source
        startPlans()
        let hooks = options.runHooks ? "\(configuration.agent.hooksDirectory) and \(configuration.agent.vendorHooksDirectory)" : "nowhere"
        Log.notice("started; state file \(stateWriter?.path ?? "none"), hooks from \(hooks)")
        startRoutingGuard(source)
        startServiceNotifications()
        linksChanged(source.links, events: [])
        // After the first look at the links: the modems' first word (even "no
        // ModemManager") must not be taken for a settled start with no uplinks.
        startModems()
    }

    // MARK: modems

    private func startModems() {
        guard configuration.agent.modems.useModemManager, let source = adapters.modems(loop) else { return }
        modems = source
        source.onChange = { [unowned self] modems in
            guard isRunning else { return }
            perform(core.modemsChanged(modems, now: now()))
        }
        source.start(signalIntervalMilliseconds: configuration.agent.modems.signalIntervalMilliseconds)
    }

    // MARK: data plans

    /// Reads the plan file and starts counting; cycles follow the system's local time.
    private func startPlans() {
        core.localTime = .system
        let store = adapters.planStore(configuration.agent.plans.path)
        if let store { core.restorePlans(store.load()) }
        let counters = adapters.counters(loop)
        counters?.onRemoved = { [unowned self] name, reading in
            guard isRunning else { return }
            Log.info("\(name): removed; its last counters go to its data plan")
            perform(core.countersRead([name: reading], now: now()))
        }
        plans = PlanKeeper(store: store, counters: counters, nowMilliseconds: loop.nowMilliseconds)
    }

    /// Keeps one timer reading the counters while some uplink has a plan.
    private func scheduleAccounting() {
        guard isRunning, let plans else { return }
        let wanted = Set(core.accountedInterfaces)
        guard !wanted.isEmpty, plans.counters != nil else {
            if let timer = plans.timer { loop.cancel(timer) }
            plans.timer = nil
            return
        }
        let ledgers = core.planLedgers
        let unbegun = wanted.filter { ledgers[$0] == nil }.subtracting(plans.baselineAsked)
        plans.baselineAsked.formUnion(unbegun)
        if !unbegun.isEmpty, let timer = plans.timer {
            loop.cancel(timer)
            plans.timer = nil
        }
        guard plans.timer == nil else { return }
        let delay = unbegun.isEmpty ? PlanKeeper.readingIntervalMilliseconds : 0
        plans.timer = loop.schedule(afterMilliseconds: delay) { [weak self] in
            guard let self, let plans = self.plans else { return }
            plans.timer = nil
            guard self.isRunning else { return }
            self.perform(self.core.countersRead(plans.read(Set(self.core.accountedInterfaces)), now: self.now()))
            if plans.saveDue(nowMilliseconds: self.loop.nowMilliseconds,
                             intervalMilliseconds: self.configuration.agent.plans.saveIntervalMilliseconds) {
                self.savePlans()
            }
        }
    }

    private func savePlans() {
        plans?.save(core.planLedgers, nowMilliseconds: loop.nowMilliseconds, wallSeconds: loop.time.wallSeconds)
    }

    /// At the stop: the last reading (its bytes only: marks it crosses are told at the
    /// next start) and the file.
    private func finishPlans() {
        guard let plans else { return }
        if let timer = plans.timer { loop.cancel(timer) }
        plans.timer = nil
        _ = core.countersRead(plans.read(Set(core.accountedInterfaces)), now: now(), final: true)
        savePlans()
    }

    /// SIGUSR1: `uplinkd plan IFACE --reset` left requests beside the plan file.
    private func takePlanRequests() {
        guard isRunning, let store = plans?.store else { return }
        for name in store.takeRequests() {
            if let actions = core.resetPlan(name, now: now()) {
                Log.notice("\(name): data plan reset by hand: a new cycle from now")
                perform(actions)
            } else {
                Log.warning("\(name): data plan reset asked for, but it has no plan")
            }
        }
    }

    /// Resets an uplink's data plan: a new cycle from now (the embedding API's
    /// `uplinkd plan --reset`). Call on the loop; false when it has no plan.
    @discardableResult
    public func resetPlan(_ name: InterfaceName) -> Bool {
        guard isRunning, let actions = core.resetPlan(name, now: now()) else { return false }
        perform(actions)
        return true
    }

    // MARK: uplinkd's routing entries

    /// Leftovers of a run that could not clean up (SIGKILL, a crash, a power cut) go
    /// before anything else, so the hooks start from nothing; kept entries
    /// (`keep-routes-on-stop`) stay until the hooks have a primary to give them.
    private func startRoutingGuard(_ source: LinkSource) {
        guard options.managesRouting else { return }
        let routing = configuration.agent.routing
        if !routing.keepOnStop {
            removeRoutingEntries(source, why: "left by an earlier run")
        }
        source.watchRouting { [unowned self] in routingMayHaveChanged() }
        // Start-up is over at the latest after ready-timeout, as for systemd.
        loop.schedule(afterMilliseconds: configuration.agent.readyTimeoutMilliseconds) { [weak self] in
            self?.armRouteGuard()
        }
    }

    private func removeRoutingEntries(_ source: LinkSource, why: String) {
        do {
            let removed = try source.removeRouting(configuration.agent.routing)
            if !removed.isEmpty { Log.notice("removed uplinkd's routing entries \(why): \(removed.joined(separator: "; "))") }
        } catch {
            Log.error("cannot remove uplinkd's routing entries \(why): \(error)")
        }
    }

    private func armRouteGuard() {
        guard options.managesRouting, !routeGuard.armed, isRunning else { return }
        routeGuard.arm()
        routingMayHaveChanged()
    }

    private func routingPicture() -> RoutingPicture {
        guard let links else { return RoutingPicture() }
        let settings = configuration.agent.routing
        let entries = links.routingEntries(settings)
        return RoutingPicture(settings: settings, rules: entries.rules, routes: entries.routes,
                              primaries: core.familyPrimaries, links: Array(links.links.values))
    }

    /// Every hook of one event has run. The route hook acts on primary and repair
    /// events only: what it left then is what the guard keeps. A change seen after any
    /// other event (or while later hooks ran) is someone else's, and is repaired once
    /// the hooks are idle.
    private func hookEventFinished(_ kind: HookEvent.Kind) {
        guard options.managesRouting, isRunning, let links else { return }
        links.catchUp()
        if kind == .primary || kind == .repair {
            routeGuard.hooksCaughtUp(routingPicture())
        } else {
            routingMayHaveChanged()
        }
    }

    /// Rules, routes or the primaries' routes may differ from what the hooks left.
    private func routingMayHaveChanged() {
        // Cheap checks first: the picture takes a rule dump.
        guard options.managesRouting, isRunning, repairTimer == nil, routeGuard.armed, adapters.hooks.pendingEvents == 0,
              let delay = routeGuard.examine(routingPicture(), hooksIdle: true) else { return }
        repairTimer = loop.schedule(afterMilliseconds: delay) { [weak self] in
            guard let self else { return }
            self.repairTimer = nil
            guard self.isRunning else { return }
            let picture = self.routingPicture()
            guard self.routeGuard.examine(picture, hooksIdle: self.adapters.hooks.pendingEvents == 0) != nil else { return }
            let change = self.routeGuard.applied.map { picture.changes(since: $0) } ?? "left by an earlier run: \(picture.entryList)"
            if self.routeGuard.repairing(now: self.loop.nowMilliseconds) {
                Log.warning("uplinkd's routing entries keep changing behind its back (another tool fighting over them?): \(change)")
            } else {
                Log.notice("uplinkd's routing entries changed behind its back: \(change)")
            }
            self.perform([.runHook(self.core.repairEvent(now: self.now()))])
        }
    }

    // MARK: systemd

    /// The start-up bound for READY=1, and the watchdog's heartbeat. Both are timers of
    /// this loop: a loop that stops turning stops the heartbeat, and systemd restarts it.
    private func startServiceNotifications() {
        guard let notifier, notifier.isActive else { return }
        loop.schedule(afterMilliseconds: configuration.agent.readyTimeoutMilliseconds) { [weak self] in
            guard let self, !self.announcedReady, self.isRunning else { return }
            let state = self.core.state(now: self.now(), pid: Int(getpid()))
            Log.notice("ready after ready-timeout; still without a verdict: "
                       + state.uplinks.filter { $0.verdict == .unknown }.map(\.interface.value).joined(separator: " "))
            self.announceReady(state)
        }
        if let interval = notifier.watchdogMilliseconds { heartbeat(every: max(1, interval / 2)) }
    }

    private func heartbeat(every milliseconds: Int) {
        notifier?.watchdog()
        loop.schedule(afterMilliseconds: milliseconds) { [weak self] in self?.heartbeat(every: milliseconds) }
    }

    private func announceReady(_ state: AgentState) {
        announcedReady = true
        notifier?.ready(status: state.summaryLine)
    }

    /// READY=1 once every uplink has a verdict; STATUS= on every change after that.
    private func serviceStateChanged(_ state: AgentState) {
        guard let notifier, notifier.isActive, isRunning else { return }
        if announcedReady {
            notifier.status(state.summaryLine)
        } else if state.isSettled {
            announceReady(state)
        } else {
            notifier.status("starting; " + state.summaryLine)
        }
    }

    /// Runs until TERM or INT (or `requestStop`); returns after the final state was written.
    public func run() throws(AdapterError) {
        try start()
        do { try loop.run() } catch { throw .system(error) }
        links = nil
        signals = nil
        modems = nil
    }

    /// Asks a running agent to stop as on TERM; safe from any thread.
    public func requestStop() {
        loop.post { [weak self] in self?.stop(reason: "requested") }
    }

    /// Runs `work` on the agent's loop (from any thread).
    public func post(_ work: @escaping () -> Void) {
        loop.post(work)
    }

    /// Stops as on TERM: lets a running hook finish, writes the final state, ends the
    /// loop. Call on the loop.
    public func stop(reason: String) {
        guard life == .running else { return }
        life = .stopping
        notifier?.stopping()
        Log.notice("stopping (\(reason)); letting a running hook finish")
        // Sent now, flushed when the bus closes after the loop: ModemManager dials on
        // after we are gone.
        for id in core.parkedBearers { modems?.setBearer(id, connected: true) }
        if let wakeTimer { loop.cancel(wakeTimer) }
        wakeTimer = nil
        if let sampleTimer { loop.cancel(sampleTimer.id) }
        sampleTimer = nil
        if let repairTimer { loop.cancel(repairTimer) }
        repairTimer = nil
        var finalEvent = options.runHooks ? core.stopEvent(now: now()) : nil
        finalEvent?.configurationPath = loader?.explicitPath
        adapters.hooks.drain(finalEvent: finalEvent) { [unowned self] in
            if options.managesRouting, let links {
                if configuration.agent.routing.keepOnStop {
                    let kept = routingPicture()
                    if !kept.hasNoEntries { Log.notice("keeping uplinkd's routing entries (keep-routes-on-stop): \(kept.entryList)") }
                } else {
                    removeRoutingEntries(links, why: "at the stop")
                }
            }
            finishPlans()
            let final = core.state(now: now(), pid: Int(getpid()), stopped: true)
            stateWriter?.publish(final)
            exportMetrics(final, events: [])
            life = .stopped
            finishStop(final, event: finalEvent)
        }
    }

    private func finishStop(_ final: AgentState, event: HookEvent?) {
        var waiting = stopObservers.count
        guard waiting > 0 else { return loop.stop() }
        loop.schedule(afterMilliseconds: Agent.stopObserverTimeoutMilliseconds) { [weak self] in self?.loop.stop() }
        for observer in stopObservers {
            observer(final, event) { [weak self] in
                waiting -= 1
                if waiting == 0 { self?.loop.stop() }
            }
        }
    }

    /// Reads the configuration file again (HUP); an invalid one is refused and the
    /// running one kept. Call on the loop.
    public func reload() {
        guard isRunning else { return }
        guard let loader else {
            Log.error("reload refused: this agent was given its configuration, not a file")
            return
        }
        // Read now, not the loop's cached millisecond: systemd (notify-reload) ignores a
        // stamp older than the signal it sent.
        notifier?.reloading(monotonicMicroseconds: Int(loop.time.monotonicNanoseconds / 1_000))
        do {
            apply(try loader.load())
        } catch {
            Log.error("reload refused, keeping the running configuration: \(error)")
        }
        // Ready again either way: the agent runs, with the new configuration or the old.
        if announcedReady { notifier?.ready(status: core.state(now: now(), pid: Int(getpid())).summaryLine) }
    }

    /// Takes a new, already validated configuration; verdicts and budgets carry over.
    /// Call on the loop.
    public func apply(_ fresh: Configuration) {
        var updated = fresh
        Agent.applyOverrides(options, to: &updated)
        if updated.agent.stateFilePath != configuration.agent.stateFilePath {
            Log.warning("state-file changes take effect at restart; still writing \(configuration.agent.stateFilePath)")
            updated.agent.stateFilePath = configuration.agent.stateFilePath
        }
        // The running agent removes at its stop what it made with the old values.
        let routing = configuration.agent.routing
        if !updated.agent.routing.sameEntries(as: routing) {
            Log.warning("route-table, rule-priority and route-protocol changes take effect at restart; "
                        + "still table \(routing.table), rules \(routing.rulePriority) and \(routing.rulePriority + 1), protocol \(routing.protocolNumber)")
            updated.agent.routing.table = routing.table
            updated.agent.routing.rulePriority = routing.rulePriority
            updated.agent.routing.protocolNumber = routing.protocolNumber
        }
        configuration = updated
        applyLogLevel()
        kinds = [:]  // `[interface NAME] kind` may have changed
        meteredLeases = [:]
        adapters.hooks.reconfigure(directories: HookDirectories(updated.agent),
                                   timeoutMilliseconds: updated.agent.hookTimeoutMilliseconds)
        core.reconfigure(updated)
        Log.notice("configuration reloaded")
        if let links { linksChanged(links.links, events: []) }
    }

    // MARK: inputs

    private func linksChanged(_ allLinks: [Int: LinkFacts], events allEvents: [LinkEvent]) {
        guard isRunning else { return }
        // The route-failover hook's routes are uplinkd's own, not the uplinks'.
        let own = configuration.agent.routing
        let links = allLinks.mapValues { $0.withoutRoutes(ownedBy: own) }
        let events = allEvents.filter { event in
            switch event {
            case .defaultRouteAdded(_, let route), .defaultRouteRemoved(_, let route): return !own.owns(route)
            default: return true
            }
        }
        let selection = configuration.uplinkSelection
        var uplinks: [ObservedUplink] = []
        kinds = kinds.filter { links[$0.key]?.name == $0.value.name }
        meteredLeases = meteredLeases.filter { links[$0.key] != nil }
        for event in events {
            switch event {
            case .addressAdded, .addressRemoved, .appeared, .renamed:
                meteredLeases[event.facts.index] = nil
                rereadLeaseSoon(event.facts.index)
            default: break
            }
        }
        for facts in links.values.sorted(by: { $0.index < $1.index }) {
            let kind = kinds[facts.index]?.kind
                ?? adapters.kinds.kind(of: facts.name, configured: configuration.configuredKind(of: facts.name))
            kinds[facts.index] = (facts.name, kind)
            guard selection.isUplink(facts, kind: kind) else { continue }
            let metered = meteredLeases[facts.index]
                ?? adapters.files.leaseSaysMetered(facts.name, index: facts.index, settings: configuration.dns)
            meteredLeases[facts.index] = metered
            uplinks.append(ObservedUplink(facts: facts, kind: kind, leaseSaysMetered: metered))
        }
        for event in events { Log.info("link: \(LinkReport.humanLine(event))") }
        perform(core.linksChanged(uplinks: uplinks, events: events, now: now()))
    }

    /// DHCP clients write the lease after they configured the address (dhclient runs
    /// its script first): read it again a little later, when it is surely there.
    private func rereadLeaseSoon(_ index: Int) {
        loop.schedule(afterMilliseconds: 3_000) { [weak self] in
            guard let self, self.isRunning, let links = self.links else { return }
            self.meteredLeases[index] = nil
            self.linksChanged(links.links, events: [])
        }
    }

    private func roundFinished(_ report: RoundReport, generation: Int) {
        guard isRunning else { return }
        Log.debug("round on \(report.interface): \(report.humanLine) (\(report.purpose.rawValue) round)")
        perform(core.roundFinished(report, generation: generation, now: now()))
    }

    // MARK: actions

    private func perform(_ actions: [AgentCore.Action]) {
        var hookEvents: [HookEvent] = []
        for action in actions {
            switch action {
            case .startRound(let plan, let generation):
                Log.debug("round on \(plan.interface): starts (\(plan.purpose.rawValue) round, \(plan.timeoutMilliseconds) ms limit)")
                rounds.run(plan) { [weak self] report in
                    self?.roundFinished(report, generation: generation)
                }
            case .runHook(var event):
                event.configurationPath = loader?.explicitPath
                Log.event(event)
                hookEvents.append(event)
                if options.runHooks { adapters.hooks.enqueue(event) }
            case .note(let note):
                Log.note(note)
            case .recoverModem(let equipmentID, let step):
                switch step {
                case .reconnect: modems?.reconnect(equipmentID)
                case .reset: modems?.reset(equipmentID)
                case .powerCycle: break
                }
            case .savePlans:
                savePlans()
            case .standbyBearer(let equipmentID, let connected):
                modems?.setBearer(equipmentID, connected: connected)
            }
        }
        let state = core.state(now: now(), pid: Int(getpid()))
        stateWriter?.publish(state)
        exportMetrics(state, events: hookEvents)
        serviceStateChanged(state)
        if state.isSettled && !routeGuard.armed { armRouteGuard() }
        if !hookEvents.isEmpty || !actions.isEmpty {
            for observer in observers { observer(state, hookEvents) }
        }
        scheduleWake()
        scheduleSample()
        scheduleAccounting()
    }

    /// Keeps one timer sampling the primary's packet counters while the core wants
    /// them (stall detection), at the pace it asks for.
    private func scheduleSample() {
        guard isRunning, let target = core.trafficSampling() else {
            if let sampleTimer { loop.cancel(sampleTimer.id) }
            sampleTimer = nil
            return
        }
        if let sampleTimer {
            guard sampleTimer.interface != target.interface else { return }
            loop.cancel(sampleTimer.id)
        }
        let id = loop.schedule(afterMilliseconds: target.delayMilliseconds) { [weak self] in
            guard let self else { return }
            self.sampleTimer = nil
            guard let packets = self.adapters.traffic.packets(of: target.interface) else {
                self.scheduleSample()
                return
            }
            let actions = self.core.trafficSampled(target.interface, receivedPackets: packets.received,
                                                   transmittedPackets: packets.transmitted, now: self.now())
            // Most samples change nothing: only the next one is due then.
            guard !actions.isEmpty else { return self.scheduleSample() }
            self.perform(actions)
        }
        sampleTimer = (id, target.interface)
    }

    private func scheduleWake() {
        if let wakeTimer { loop.cancel(wakeTimer) }
        wakeTimer = nil
        guard isRunning, let wake = core.nextWakeMilliseconds() else { return }
        wakeTimer = loop.schedule(afterMilliseconds: max(0, wake - loop.nowMilliseconds)) { [weak self] in
            guard let self else { return }
            self.wakeTimer = nil
            self.perform(self.core.tick(now: self.now()))
        }
    }

    private func exportMetrics(_ state: AgentState, events: [HookEvent]) {
        metrics.publish(state, events: events, probeBytes: core.probeBytesTotals,
                        hookEventsPending: adapters.hooks.pendingEvents, nowMilliseconds: loop.nowMilliseconds,
                        to: configuration.export.prometheusTextfilePath)
    }

    private func applyLogLevel() {
        guard options.setsLogLevel else { return }
        let configured = configuration.agent.logLevel
        Log.threshold = min(options.logLevelOverride ?? configured, configured)
    }

    private func now() -> Instant {
        Instant(monotonicMilliseconds: loop.nowMilliseconds, wallSeconds: loop.time.wallSeconds)
    }

    private static func applyOverrides(_ options: Options, to configuration: inout Configuration) {
        if let state = options.stateFileOverride { configuration.agent.stateFilePath = state }
        if let hooks = options.hooksDirectoryOverride { configuration.agent.hooksDirectory = hooks }
    }
}
