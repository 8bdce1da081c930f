/// The agent's decisions, free of I/O: which uplinks exist, when each is probed, what
/// each verdict is, which uplink is primary, and what hooks must hear. The runtime
/// feeds it link states, finished probe rounds and the time, and carries out the
/// actions it returns.
public struct AgentCore: Sendable {
    /// What the runtime must do.
    public enum Action: Sendable, Equatable {
        /// Run this round; report back with the same generation.
        case startRound(RoundPlan, generation: Int)
        case runHook(HookEvent)
    }

    struct Uplink: Sendable {
        var name: InterfaceName
        var index: Int
        var kind: InterfaceKind
        var link: LinkEvaluator.Result
        var machine: VerdictMachine
        var schedule: ProbeSchedule
        /// Generation of the round in flight, if any: a round is accepted only while it
        /// is still the uplink's current one, so a round started before a link change
        /// cannot decide after it.
        var roundInFlight: Int?
        /// The next round was asked for by a link event (allowed over budget).
        var linkTriggered = false
        /// A round was asked for while one was in flight: start another right after.
        var probeAgain = false
        /// Where the last round found the uplink's DNS servers.
        var dnsSource: DNSSource?
    }

    public private(set) var configuration: Configuration
    public var policy: AgentPolicy { configuration.agent }
    private var uplinks: [InterfaceName: Uplink] = [:]
    /// Byte budgets by interface name; they outlive an uplink that vanishes and comes
    /// back (a modem re-enumerating must not reset its metered day).
    private var budgets: [InterfaceName: ByteBudget] = [:]
    /// Round generations grow across all uplinks for the life of the core, so a round
    /// of a vanished uplink can never match one of its successor.
    private var lastGeneration = 0
    private var selector = PrimarySelector()

    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    public var primary: InterfaceName? { selector.primary }
    public var uplinkNames: [InterfaceName] { uplinks.keys.sorted() }

    public func verdict(of name: InterfaceName) -> Assessment? { uplinks[name]?.machine.assessment }

    /// Applies a new configuration (HUP): policy and budgets change, verdicts stay.
    public mutating func reconfigure(_ configuration: Configuration) {
        self.configuration = configuration
        for (name, uplink) in uplinks {
            budgets[name, default: ByteBudget(limitBytes: nil)].limitBytes =
                configuration.dailyBudgetBytes(of: name, kind: uplink.kind)
        }
    }

    // MARK: inputs

    /// The uplinks as they are now (the selected interfaces with their facts and
    /// kinds) and the link events since the last call.
    public mutating func linksChanged(uplinks current: [(facts: LinkFacts, kind: InterfaceKind)],
                                      events: [LinkEvent], now: Instant) -> [Action] {
        var hooks: [HookEvent] = []
        let currentNames = Set(current.map { $0.facts.name })

        let vanished = Set(events.compactMap { event -> InterfaceName? in
            if case .disappeared(let facts) = event { return facts.name } else { return nil }
        })
        for name in uplinks.keys.sorted() where !currentNames.contains(name) {
            var uplink = uplinks.removeValue(forKey: name)!
            let previous = uplink.machine.verdict
            // Gone from the kernel, or no longer selected as an uplink (configuration).
            let reason: Reason = vanished.contains(name) ? .noSuchInterface : .notAnUplink
            if uplink.machine.linkChanged(.down(reason: reason), now: now) {
                hooks.append(verdictEvent(uplink, previous: previous, now: now))
            }
        }

        for (facts, kind) in current {
            let name = facts.name
            let link = LinkEvaluator.evaluate(facts)
            var uplink = uplinks[name] ?? Uplink(
                name: name, index: facts.index, kind: kind, link: link, machine: VerdictMachine(now: now),
                schedule: ProbeSchedule(policy: policy))
            let isNew = uplinks[name] == nil
            budgets[name, default: ByteBudget(limitBytes: nil)].limitBytes =
                configuration.dailyBudgetBytes(of: name, kind: kind)
            uplink.kind = kind
            uplink.index = facts.index
            let previousLink = uplink.link
            uplink.link = link
            let previous = uplink.machine.verdict
            if uplink.machine.linkChanged(link, now: now) {
                hooks.append(verdictEvent(uplink, previous: previous, now: now))
            }
            switch link {
            case .down:
                uplink.schedule.stop()
                uplink.roundInFlight = nil
            case .probe:
                let triggered = events.contains { $0.facts.name == name && AgentCore.canChangeAnswer($0) }
                if isNew || triggered || previousLink != link {
                    uplink.roundInFlight = nil
                    uplink.schedule.probeNow(at: now.monotonicMilliseconds, policy: policy)
                    uplink.linkTriggered = true
                }
            }
            uplinks[name] = uplink
        }
        return hooks.map(Action.runHook) + reselectPrimary(now: now) + dueRounds(now: now)
    }

    /// A probe round finished. Results of a stale generation only count their bytes.
    public mutating func roundFinished(_ report: CheckReport, generation: Int, now: Instant) -> [Action] {
        // Bytes were spent whatever became of the uplink.
        budgets[report.interface, default: ByteBudget(limitBytes: nil)]
            .record(report.probes.reduce(0) { $0 + $1.bytes }, at: now.monotonicMilliseconds)
        guard var uplink = uplinks[report.interface], uplink.roundInFlight == generation else {
            return dueRounds(now: now)
        }
        uplink.roundInFlight = nil
        if let dns = report.dns { uplink.dnsSource = dns.source }
        var actions: [Action] = []
        let previous = uplink.machine.verdict
        if uplink.machine.roundFinished(report.assessment, families: report.families, policy: policy, now: now) {
            actions.append(.runHook(verdictEvent(uplink, previous: previous, now: now)))
        }
        if case .probe = uplink.link {
            uplink.schedule.roundFinished(at: now.monotonicMilliseconds, suspect: uplink.machine.isSuspect,
                                          online: uplink.machine.verdict == .online, policy: policy)
            if uplink.probeAgain {
                uplink.probeAgain = false
                uplink.schedule.probeNow(at: now.monotonicMilliseconds, policy: policy)
            }
        }
        uplinks[report.interface] = uplink
        return actions + reselectPrimary(now: now) + dueRounds(now: now)
    }

    /// Probe an uplink at once, outside its schedule (after a portal-login hook, say).
    /// Allowed over a spent budget, like a link event.
    public mutating func probeNow(_ name: InterfaceName, now: Instant) -> [Action] {
        guard var uplink = uplinks[name], case .probe = uplink.link else { return [] }
        if uplink.roundInFlight != nil {
            uplink.probeAgain = true
        } else {
            uplink.schedule.probeNow(at: now.monotonicMilliseconds, policy: policy)
        }
        uplink.linkTriggered = true
        uplinks[name] = uplink
        return dueRounds(now: now)
    }

    /// Time passed: start due rounds, end hold-downs.
    public mutating func tick(now: Instant) -> [Action] {
        reselectPrimary(now: now) + dueRounds(now: now)
    }

    /// When the runtime must call `tick` next (monotonic milliseconds), if ever.
    public func nextWakeMilliseconds() -> Int? {
        var wake = selector.holdDownEndsMilliseconds
        for uplink in uplinks.values where uplink.roundInFlight == nil {
            guard let due = uplink.schedule.nextDueMilliseconds else { continue }
            wake = min(wake ?? due, due)
        }
        return wake
    }

    // MARK: outputs

    public func state(now: Instant, pid: Int, stopped: Bool = false) -> AgentState {
        AgentState(primary: selector.primary, uplinks: uplinks.keys.sorted().map { name in
            let uplink = uplinks[name]!
            let assessment = uplink.machine.assessment
            let budget = budgets[name] ?? ByteBudget(limitBytes: nil)
            return UplinkStatus(
                interface: name, kind: uplink.kind, verdict: assessment.verdict, reason: assessment.reason,
                sinceWallSeconds: uplink.machine.since.wallSeconds,
                ipv4: uplink.machine.families[.ipv4]?.verdict, ipv6: uplink.machine.families[.ipv6]?.verdict,
                bytesToday: budget.spentBytes(at: now.monotonicMilliseconds), budgetBytes: budget.limitBytes,
                budgetExhausted: budget.isExhausted(at: now.monotonicMilliseconds),
                portalURL: assessment.verdict == .captive ? assessment.portalURL : nil,
                ipv4Reason: uplink.machine.families[.ipv4]?.reason, ipv6Reason: uplink.machine.families[.ipv6]?.reason,
                dnsSource: uplink.dnsSource)
        }, writtenWallSeconds: now.wallSeconds, pid: pid, stopped: stopped)
    }

    // MARK: internals

    /// Link events after which a probe can give a different answer.
    static func canChangeAnswer(_ event: LinkEvent) -> Bool {
        switch event {
        case .appeared, .renamed, .addressAdded, .defaultRouteAdded: return true
        case .adminChanged(let facts): return facts.adminUp
        case .carrierChanged(let facts): return facts.carrier
        case .disappeared, .addressRemoved, .defaultRouteRemoved: return false
        }
    }

    private mutating func dueRounds(now: Instant) -> [Action] {
        var actions: [Action] = []
        for name in uplinks.keys.sorted() {
            var uplink = uplinks[name]!
            guard uplink.roundInFlight == nil, case .probe(let families) = uplink.link,
                  uplink.schedule.isDue(at: now.monotonicMilliseconds) else { continue }
            if !uplink.linkTriggered, var budget = budgets[name], !budget.allowsPeriodicProbe(at: now.monotonicMilliseconds) {
                // Budget spent: only link events probe until the day's window rolls over.
                budgets[name] = budget
                uplink.schedule.postpone(until: budget.windowEndMilliseconds ?? now.monotonicMilliseconds + ByteBudget.dayMilliseconds)
                uplinks[name] = uplink
                continue
            }
            uplink.linkTriggered = false
            lastGeneration += 1
            uplink.roundInFlight = lastGeneration
            uplinks[name] = uplink
            let plan = RoundPlan(interface: uplink.name, index: uplink.index, kind: uplink.kind, link: .probe(families))
            actions.append(.startRound(plan, generation: lastGeneration))
        }
        return actions
    }

    private mutating func reselectPrimary(now: Instant) -> [Action] {
        let previous = selector.primary
        let candidates = uplinks.values.map { uplink in
            PrimarySelector.Candidate(name: uplink.name, kind: uplink.kind, verdict: uplink.machine.verdict,
                                      onlineSinceMilliseconds: uplink.machine.since.monotonicMilliseconds,
                                      recovered: uplink.machine.previousVerdict != .unknown)
        }
        guard selector.select(from: candidates, policy: policy, now: now.monotonicMilliseconds) else { return [] }
        // The event describes the new primary, or the old one when none is left (it may
        // have vanished altogether).
        guard let subjectName = selector.primary ?? previous else { return [] }
        let subject = uplinks[subjectName]
        let assessment = subject?.machine.assessment ?? Assessment(.down, reason: .noSuchInterface)
        return [.runHook(HookEvent(kind: .primary, interface: subjectName, interfaceKind: subject?.kind ?? .other,
                                   verdict: assessment.verdict, previousVerdict: assessment.verdict,
                                   reason: assessment.reason, portalURL: assessment.portalURL,
                                   primary: selector.primary, previousPrimary: previous, wallSeconds: now.wallSeconds))]
    }

    private func verdictEvent(_ uplink: Uplink, previous: Verdict, now: Instant) -> HookEvent {
        let assessment = uplink.machine.assessment
        return HookEvent(kind: .verdict, interface: uplink.name, interfaceKind: uplink.kind,
                         verdict: assessment.verdict, previousVerdict: previous, reason: assessment.reason,
                         portalURL: assessment.verdict == .captive ? assessment.portalURL : nil,
                         primary: selector.primary, previousPrimary: selector.primary, wallSeconds: now.wallSeconds)
    }
}
