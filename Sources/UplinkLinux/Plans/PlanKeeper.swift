import UplinkCore

/// The agent's runtime side of data plans: where counters are read, where the plans
/// are kept, the timer that reads them while some uplink has a plan, when they were
/// last written, and the `uplinkd plan --reset` requests. The core counts; this
/// reads, schedules and stores. Created at the agent's start; runs on its loop.
final class PlanKeeper {
    /// Counters are read this often while an uplink has a plan: marks and the cap are
    /// noticed within this time, and a device lost without its last word (a missed
    /// removal) loses at most this much of its traffic.
    static let readingIntervalMilliseconds = 10_000

    private unowned let agent: Agent
    let store: PlanStore?
    private let counters: LinkCounting?
    private var timer: EventLoop.TimerID?
    /// Uplinks whose counting had not begun when the agent last scheduled a reading:
    /// their baseline is taken at once, not a reading interval later, so what they
    /// carry from the start on is counted even by an agent stopped within seconds.
    private var baselineAsked: Set<InterfaceName> = []
    private var lastSaveMilliseconds: Int

    /// Reads the plan file into the core and starts following the counters; cycles
    /// follow the system's local time.
    init(agent: Agent) {
        self.agent = agent
        agent.core.localTime = .system
        store = agent.adapters.planStore(agent.configuration.agent.plans.path)
        if let store { agent.core.restorePlans(store.load()) }
        counters = agent.adapters.counters(agent.loop)
        lastSaveMilliseconds = agent.loop.nowMilliseconds
        counters?.onRemoved = { [unowned agent] name, reading in
            guard agent.isRunning else { return }
            Log.info("\(name): removed; its last counters go to its data plan")
            agent.perform(agent.core.countersRead([name: reading], now: agent.now()))
        }
    }

    /// Keeps one timer reading the counters while some uplink has a plan.
    func schedule() {
        guard agent.isRunning else { return }
        let wanted = Set(agent.core.accountedInterfaces)
        guard !wanted.isEmpty, counters != nil else { return cancel() }
        let ledgers = agent.core.planLedgers
        let unbegun = wanted.filter { ledgers[$0] == nil }.subtracting(baselineAsked)
        baselineAsked.formUnion(unbegun)
        if !unbegun.isEmpty { cancel() }
        guard timer == nil else { return }
        let delay = unbegun.isEmpty ? PlanKeeper.readingIntervalMilliseconds : 0
        timer = agent.loop.schedule(afterMilliseconds: delay) { [weak self] in
            guard let self else { return }
            timer = nil
            guard agent.isRunning else { return }
            agent.perform(agent.core.countersRead(read(), now: agent.now()))
            if agent.loop.nowMilliseconds - lastSaveMilliseconds >= agent.configuration.agent.plans.saveIntervalMilliseconds {
                save()
            }
        }
    }

    func save() {
        lastSaveMilliseconds = agent.loop.nowMilliseconds
        store?.save(agent.core.planLedgers, wallSeconds: agent.loop.time.wallSeconds)
    }

    /// At the stop: the last reading (its bytes only: marks it crosses are told at the
    /// next start) and the file.
    func finish() {
        cancel()
        _ = agent.core.countersRead(read(), now: agent.now(), final: true)
        save()
    }

    /// SIGUSR1: `uplinkd plan IFACE --reset` left requests beside the plan file.
    func takeRequests() {
        guard agent.isRunning, let store else { return }
        for name in store.takeRequests() {
            if reset(name) {
                Log.notice("\(name): data plan reset by hand: a new cycle from now")
            } else {
                Log.warning("\(name): data plan reset asked for, but it has no plan")
            }
        }
    }

    /// A new cycle of `name`'s plan from now; false when it has no plan.
    func reset(_ name: InterfaceName) -> Bool {
        guard agent.isRunning, let actions = agent.core.resetPlan(name, now: agent.now()) else { return false }
        agent.perform(actions)
        return true
    }

    /// The counters of the uplinks with a plan now, removals already queued reported first.
    private func read() -> [InterfaceName: CounterReading] {
        let names = Set(agent.core.accountedInterfaces)
        guard let counters, !names.isEmpty else { return [:] }
        counters.catchUp()
        return counters.readings(of: names)
    }

    private func cancel() {
        if let timer { agent.loop.cancel(timer) }
        timer = nil
    }
}
