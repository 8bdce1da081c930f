import Testing
import UplinkCore

private func at(_ milliseconds: Int) -> Instant {
    Instant(monotonicMilliseconds: milliseconds, wallSeconds: 1_800_000_000 + milliseconds / 1_000)
}

private let online = Assessment(.online, reason: "validated")
private let limited = Assessment(.limited, reason: "timeout")
private let captive = Assessment(.captive, reason: "redirect", portalURL: "http://portal.example/login")

private func policy(_ change: (inout AgentPolicy) -> Void = { _ in }) -> AgentPolicy {
    var policy = AgentPolicy()
    policy.intervalMilliseconds = 60_000
    policy.suspectIntervalMilliseconds = 1_000
    policy.failuresToLeaveOnline = 2
    policy.successesToReturnOnline = 2
    policy.holdDownMilliseconds = 30_000
    change(&policy)
    return policy
}

@Suite("VerdictMachine: hysteresis")
struct VerdictMachineTests {
    @Test func firstRoundDecidesAtOnce() {
        var machine = VerdictMachine(now: at(0))
        #expect(machine.verdict == .unknown)
        do {
            let result = machine.roundFinished(limited, families: [:], policy: policy(), now: at(10))
            #expect(result)
        }
        #expect(machine.verdict == .limited)
        #expect(machine.since == at(10))
    }

    @Test func leavingOnlineNeedsConsecutiveFailures() {
        var machine = VerdictMachine(now: at(0))
        _ = machine.roundFinished(online, families: [:], policy: policy(), now: at(1))
        do {
            let result = machine.roundFinished(limited, families: [:], policy: policy(), now: at(2))
            #expect(!result)
        }
        #expect(machine.verdict == .online)
        #expect(machine.isSuspect)
        // A success in between resets the count.
        do {
            let result = machine.roundFinished(online, families: [:], policy: policy(), now: at(3))
            #expect(!result)
        }
        #expect(!machine.isSuspect)
        do {
            let result = machine.roundFinished(limited, families: [:], policy: policy(), now: at(4))
            #expect(!result)
        }
        do {
            let result = machine.roundFinished(captive, families: [:], policy: policy(), now: at(5))
            #expect(result)
        }
        #expect(machine.assessment == captive)
        #expect(machine.since == at(5))
    }

    @Test func returningOnlineNeedsConsecutiveSuccesses() {
        var machine = VerdictMachine(now: at(0))
        _ = machine.roundFinished(limited, families: [:], policy: policy(), now: at(1))
        do {
            let result = machine.roundFinished(online, families: [:], policy: policy(), now: at(2))
            #expect(!result)
        }
        #expect(machine.verdict == .limited)
        do {
            let result = machine.roundFinished(online, families: [:], policy: policy(), now: at(3))
            #expect(result)
        }
        #expect(machine.verdict == .online)
    }

    @Test func thresholdsOfOneActImmediately() {
        let eager = policy { $0.failuresToLeaveOnline = 1; $0.successesToReturnOnline = 1 }
        var machine = VerdictMachine(now: at(0))
        _ = machine.roundFinished(online, families: [:], policy: eager, now: at(1))
        do {
            let result = machine.roundFinished(limited, families: [:], policy: eager, now: at(2))
            #expect(result)
        }
        do {
            let result = machine.roundFinished(online, families: [:], policy: eager, now: at(3))
            #expect(result)
        }
    }

    @Test func captiveAndLimitedSwitchWithoutHysteresis() {
        var machine = VerdictMachine(now: at(0))
        _ = machine.roundFinished(limited, families: [:], policy: policy(), now: at(1))
        do {
            let result = machine.roundFinished(captive, families: [:], policy: policy(), now: at(2))
            #expect(result)
        }
        #expect(machine.verdict == .captive)
    }

    @Test func carrierLossIsDownAtOnceAndNextRoundDecides() {
        var machine = VerdictMachine(now: at(0))
        _ = machine.roundFinished(online, families: [:], policy: policy(), now: at(1))
        do {
            let result = machine.linkChanged(.down(reason: "no-carrier"), now: at(2))
            #expect(result)
        }
        #expect(machine.assessment == Assessment(.down, reason: "no-carrier"))
        do {
            let result = machine.linkChanged(.probe([.ipv4]), now: at(3))
            #expect(!result)
        }
        #expect(machine.verdict == .down)
        // Back from down: no hysteresis, the first round decides.
        do {
            let result = machine.roundFinished(online, families: [.ipv4: online], policy: policy(), now: at(4))
            #expect(result)
        }
        #expect(machine.verdict == .online)
        #expect(machine.families[.ipv4] == online)
    }

    @Test func sameVerdictKeepsSinceButRefreshesReason() {
        var machine = VerdictMachine(now: at(0))
        _ = machine.roundFinished(limited, families: [:], policy: policy(), now: at(1))
        let refused = Assessment(.limited, reason: "refused")
        do {
            let result = machine.roundFinished(refused, families: [:], policy: policy(), now: at(9))
            #expect(!result)
        }
        #expect(machine.assessment == refused)
        #expect(machine.since == at(1))
    }
}

@Suite("ProbeSchedule: back-off")
struct ProbeScheduleTests {
    @Test func backOffDoublesUpToTheInterval() {
        let p = policy { $0.intervalMilliseconds = 10_000; $0.suspectIntervalMilliseconds = 1_000 }
        var schedule = ProbeSchedule(policy: p)
        schedule.probeNow(at: 0, policy: p)
        #expect(schedule.isDue(at: 0))
        var now = 0
        var gaps: [Int] = []
        for _ in 0..<6 {
            schedule.roundFinished(at: now, suspect: true, online: false, policy: p)
            let due = schedule.nextDueMilliseconds!
            gaps.append(due - now)
            now = due
        }
        #expect(gaps == [1_000, 2_000, 4_000, 8_000, 10_000, 10_000])
        schedule.roundFinished(at: now, suspect: false, online: true, policy: p)
        #expect(schedule.nextDueMilliseconds == now + 10_000)
        // Stable again: the next suspect phase starts over at the suspect interval.
        schedule.roundFinished(at: now, suspect: true, online: true, policy: p)
        #expect(schedule.nextDueMilliseconds == now + 1_000)
    }

    @Test func probeOnlyWhileNotOnline() {
        let p = policy { $0.probeWhenOnline = false }
        var schedule = ProbeSchedule(policy: p)
        schedule.roundFinished(at: 100, suspect: false, online: true, policy: p)
        #expect(schedule.nextDueMilliseconds == nil)
        schedule.roundFinished(at: 100, suspect: false, online: false, policy: p)
        #expect(schedule.nextDueMilliseconds == 100 + p.intervalMilliseconds)
    }
}

@Suite("PrimarySelector: priority and hold-down")
struct PrimarySelectorTests {
    private func candidate(_ name: String, _ kind: InterfaceKind, _ verdict: Verdict, since: Int = 0) -> PrimarySelector.Candidate {
        PrimarySelector.Candidate(name: name, kind: kind, verdict: verdict, onlineSinceMilliseconds: since)
    }

    @Test func bestOnlineByKindPriority() {
        var selector = PrimarySelector()
        do {
            let result = selector.select(from: [candidate("wwan0", .wwan, .online), candidate("wlan0", .wifi, .online),
                                       candidate("eth0", .ethernet, .limited)], policy: policy(), now: 0)
            #expect(result)
        }
        #expect(selector.primary == "wlan0")
    }

    @Test func noOnlineUplinkMeansNoPrimary() {
        var selector = PrimarySelector()
        _ = selector.select(from: [candidate("eth0", .ethernet, .online)], policy: policy(), now: 0)
        do {
            let result = selector.select(from: [candidate("eth0", .ethernet, .captive)], policy: policy(), now: 1)
            #expect(result)
        }
        #expect(selector.primary == nil)
    }

    @Test func recoveredPreferredUplinkWaitsForHoldDown() {
        var selector = PrimarySelector()
        _ = selector.select(from: [candidate("wlan0", .wifi, .online)], policy: policy(), now: 0)
        #expect(selector.primary == "wlan0")
        let recovered = [candidate("eth0", .ethernet, .online, since: 100_000), candidate("wlan0", .wifi, .online)]
        do {
            let result = selector.select(from: recovered, policy: policy(), now: 100_000)
            #expect(!result)
        }
        #expect(selector.primary == "wlan0")
        #expect(selector.holdDownEndsMilliseconds == 130_000)
        do {
            let result = selector.select(from: recovered, policy: policy(), now: 129_999)
            #expect(!result)
        }
        do {
            let result = selector.select(from: recovered, policy: policy(), now: 130_000)
            #expect(result)
        }
        #expect(selector.primary == "eth0")
    }

    @Test func startUpIsNotARecovery() {
        var selector = PrimarySelector()
        _ = selector.select(from: [candidate("wlan0", .wifi, .online)], policy: policy(), now: 0)
        let firstRound = PrimarySelector.Candidate(name: "eth0", kind: .ethernet, verdict: .online,
                                                   onlineSinceMilliseconds: 300, recovered: false)
        do {
            let result = selector.select(from: [firstRound, candidate("wlan0", .wifi, .online)], policy: policy(), now: 300)
            #expect(result)
        }
        #expect(selector.primary == "eth0")
    }

    @Test func noHoldDownWhenThePrimaryIsLost() {
        var selector = PrimarySelector()
        _ = selector.select(from: [candidate("eth0", .ethernet, .online)], policy: policy(), now: 0)
        // eth0 fails; wwan0 just came online: it takes over at once.
        do {
            let result = selector.select(from: [candidate("eth0", .ethernet, .limited), candidate("wwan0", .wwan, .online, since: 5_000)],
                                policy: policy(), now: 5_000)
            #expect(result)
        }
        #expect(selector.primary == "wwan0")
    }

    @Test func interfaceNamesInPriorityBeatKinds() {
        var selector = PrimarySelector()
        let byName = policy { $0.priority = ["wwan0", "ethernet"] }
        _ = selector.select(from: [candidate("eth0", .ethernet, .online), candidate("wwan0", .wwan, .online)], policy: byName, now: 0)
        #expect(selector.primary == "wwan0")
    }
}

@Suite("HookQueue: coalescing")
struct HookQueueTests {
    private func verdict(_ interface: String, _ previous: Verdict, _ verdict: Verdict) -> HookEvent {
        HookEvent(kind: .verdict, interface: interface, interfaceKind: .ethernet, verdict: verdict, previousVerdict: previous,
                  reason: "r", portalURL: nil, primary: nil, previousPrimary: nil, wallSeconds: 0)
    }

    private func primary(_ new: String?, from old: String?) -> HookEvent {
        HookEvent(kind: .primary, interface: new ?? old ?? "", interfaceKind: .ethernet, verdict: .online, previousVerdict: .online,
                  reason: "r", portalURL: nil, primary: new, previousPrimary: old, wallSeconds: 0)
    }

    @Test func latestVerdictWinsKeepingThePreviousHooksKnew() {
        var queue = HookQueue()
        queue.enqueue(verdict("eth0", .online, .limited))
        queue.enqueue(verdict("eth0", .limited, .captive))
        #expect(queue.pending.count == 1)
        #expect(queue.pending[0].previousVerdict == .online)
        #expect(queue.pending[0].verdict == .captive)
    }

    @Test func aChangeThatUndoesItselfDisappears() {
        var queue = HookQueue()
        queue.enqueue(verdict("eth0", .online, .limited))
        queue.enqueue(verdict("eth0", .limited, .online))
        #expect(queue.isEmpty)
    }

    @Test func primaryEventsKeepTheirOrderAndUplinksStaySeparate() {
        var queue = HookQueue()
        queue.enqueue(primary("wlan0", from: "eth0"))
        queue.enqueue(verdict("eth0", .online, .limited))
        queue.enqueue(primary("eth0", from: "wlan0"))
        queue.enqueue(verdict("wlan0", .online, .captive))
        queue.enqueue(primary("wlan0", from: "eth0"))
        #expect(queue.pending.map(\.kind) == [.primary, .verdict, .primary, .verdict, .primary])
        #expect(queue.next()?.primary == "wlan0")
        #expect(queue.next()?.interface == "eth0")
        #expect(queue.next()?.primary == "eth0")
    }

    @Test func environmentCarriesTheFacts() {
        var event = verdict("wlan0", .online, .captive)
        event.portalURL = "http://portal.example/"
        #expect(event.environment.contains("UPLINK_EVENT=verdict"))
        #expect(event.environment.contains("UPLINK_PREVIOUS=online"))
        #expect(event.environment.contains("UPLINK_VERDICT=captive"))
        #expect(event.environment.contains("UPLINK_PORTAL_URL=http://portal.example/"))
        #expect(event.environment.contains("UPLINK_PRIMARY="))
    }
}

@Suite("ByteBudget")
struct ByteBudgetTests {
    @Test func budgetStopsPeriodicProbesUntilTheNextDay() {
        var budget = ByteBudget(limitBytes: 1_000)
        budget.record(600, at: 0)
        do {
            let result = budget.allowsPeriodicProbe(at: 1)
            #expect(result)
        }
        budget.record(500, at: 2)
        do {
            let result = budget.allowsPeriodicProbe(at: 3)
            #expect(!result)
        }
        #expect(budget.isExhausted(at: 3))
        #expect(budget.totalBytes == 1_100)
        do {
            let result = budget.allowsPeriodicProbe(at: ByteBudget.dayMilliseconds)
            #expect(result)
        }
        #expect(budget.spentBytes == 0)
        #expect(budget.totalBytes == 1_100)
    }

    @Test func noLimitNeverStops() {
        var budget = ByteBudget(limitBytes: nil)
        budget.record(1 << 30, at: 0)
        do {
            let result = budget.allowsPeriodicProbe(at: 1)
            #expect(result)
        }
    }
}

@Suite("AgentCore")
struct AgentCoreTests {
    private func uplink(_ name: String, index: Int, carrier: Bool = true) throws -> LinkFacts {
        LinkFacts(name: try #require(InterfaceName(name)), index: index, adminUp: true, carrier: carrier,
                  addresses: [try address("10.0.\(index).2", 24)], defaultRoutes: [defaultRoute(.ipv4, via: "10.0.\(index).1")])
    }

    private func report(_ name: String, _ assessment: Assessment, bytes: Int = 500) -> CheckReport {
        CheckReport(interface: name, kind: .ethernet, assessment: assessment, families: [.ipv4: assessment],
                    probes: [ProbeReport(name: "a", url: "http://x/", family: .ipv4, judgement: .valid, status: 204,
                                         elapsedMilliseconds: 1, bytes: bytes)],
                    elapsedMilliseconds: 1)
    }

    private func rounds(_ actions: [AgentCore.Action]) -> [String: Int] {
        var result: [String: Int] = [:]
        for case .startRound(let name, _, let generation) in actions { result[name.value] = generation }
        return result
    }

    private func hooks(_ actions: [AgentCore.Action]) -> [HookEvent] {
        actions.compactMap { if case .runHook(let event) = $0 { return event } else { return nil } }
    }

    @Test func startUpProbesAtOnceThenPicksThePrimary() throws {
        var core = AgentCore(policy: policy())
        let eth0 = try uplink("eth0", index: 2), wwan0 = try uplink("wwan0", index: 3)
        let started = core.linksChanged(uplinks: [(eth0, .ethernet), (wwan0, .wwan)], events: [], now: at(0))
        let generations = rounds(started)
        #expect(Set(generations.keys) == ["eth0", "wwan0"])
        let afterWwan = core.roundFinished(report("wwan0", online), generation: generations["wwan0"]!, now: at(50))
        #expect(core.primary == "wwan0")
        #expect(hooks(afterWwan).map(\.kind) == [.verdict, .primary])
        // eth0's first round ends 10 ms later: start-up is no recovery, it takes over now.
        let afterEth = core.roundFinished(report("eth0", online), generation: generations["eth0"]!, now: at(60))
        #expect(core.primary == "eth0")
        #expect(hooks(afterEth).last?.previousPrimary == "wwan0")
    }

    @Test func recoveredUplinkWaitsForHoldDown() throws {
        var core = AgentCore(policy: policy())
        let eth0 = try uplink("eth0", index: 2), wwan0 = try uplink("wwan0", index: 3)
        let started = rounds(core.linksChanged(uplinks: [(eth0, .ethernet), (wwan0, .wwan)], events: [], now: at(0)))
        _ = core.roundFinished(report("eth0", limited), generation: started["eth0"]!, now: at(10))
        _ = core.roundFinished(report("wwan0", online), generation: started["wwan0"]!, now: at(20))
        #expect(core.primary == "wwan0")
        // eth0 recovers at its next periodic round: two validated rounds (hysteresis; the
        // second comes fast, eth0 being suspect), then the hold-down.
        #expect(core.nextWakeMilliseconds() == 10 + 60_000)
        var generation = try #require(rounds(core.tick(now: at(60_010)))["eth0"])
        _ = core.roundFinished(report("eth0", online), generation: generation, now: at(60_010))
        #expect(core.verdict(of: "eth0")?.verdict == .limited)
        // Suspect now: the next round is one suspect interval away, not a full interval.
        generation = try #require(rounds(core.tick(now: at(61_010)))["eth0"])
        _ = core.roundFinished(report("eth0", online), generation: generation, now: at(61_010))
        #expect(core.verdict(of: "eth0")?.verdict == .online)
        #expect(core.primary == "wwan0")
        #expect(core.nextWakeMilliseconds() == 61_010 + 30_000)
        let later = core.tick(now: at(91_010))
        #expect(core.primary == "eth0")
        #expect(hooks(later).first?.primary == "eth0")
        #expect(hooks(later).first?.previousPrimary == "wwan0")
    }

    @Test func carrierLossIsImmediateAndStaleRoundsAreIgnored() throws {
        var core = AgentCore(policy: policy())
        let eth0 = try uplink("eth0", index: 2)
        let first = rounds(core.linksChanged(uplinks: [(eth0, .ethernet)], events: [], now: at(0)))
        _ = core.roundFinished(report("eth0", online), generation: first["eth0"]!, now: at(10))
        #expect(core.primary == "eth0")
        // A periodic round starts, then carrier drops while it is in flight.
        let periodic = rounds(core.tick(now: at(60_010)))
        #expect(periodic["eth0"] != nil)
        var lost = eth0
        lost.carrier = false
        let actions = core.linksChanged(uplinks: [(lost, .ethernet)], events: [.carrierChanged(lost)], now: at(60_020))
        #expect(core.verdict(of: "eth0") == Assessment(.down, reason: "no-carrier"))
        #expect(core.primary == nil)
        #expect(hooks(actions).map(\.kind) == [.verdict, .primary])
        // The round from before the carrier loss cannot bring it back.
        _ = core.roundFinished(report("eth0", online), generation: periodic["eth0"]!, now: at(60_030))
        #expect(core.verdict(of: "eth0")?.verdict == .down)
        #expect(core.nextWakeMilliseconds() == nil)
        // Carrier back: probe at once; that round decides without hysteresis.
        let back = rounds(core.linksChanged(uplinks: [(eth0, .ethernet)], events: [.carrierChanged(eth0)], now: at(61_000)))
        #expect(back["eth0"] != nil)
        _ = core.roundFinished(report("eth0", online), generation: back["eth0"]!, now: at(61_010))
        #expect(core.verdict(of: "eth0")?.verdict == .online)
    }

    @Test func suspectUplinksAreProbedFaster() throws {
        var core = AgentCore(policy: policy())
        let eth0 = try uplink("eth0", index: 2)
        var generation = rounds(core.linksChanged(uplinks: [(eth0, .ethernet)], events: [], now: at(0)))["eth0"]!
        _ = core.roundFinished(report("eth0", online), generation: generation, now: at(0))
        #expect(core.nextWakeMilliseconds() == 60_000)
        generation = rounds(core.tick(now: at(60_000)))["eth0"]!
        _ = core.roundFinished(report("eth0", limited), generation: generation, now: at(60_000))
        #expect(core.verdict(of: "eth0")?.verdict == .online)
        #expect(core.nextWakeMilliseconds() == 61_000)
        generation = rounds(core.tick(now: at(61_000)))["eth0"]!
        let actions = core.roundFinished(report("eth0", limited), generation: generation, now: at(61_000))
        #expect(core.verdict(of: "eth0")?.verdict == .limited)
        #expect(hooks(actions).first?.previousVerdict == .online)
    }

    @Test func spentBudgetStopsPeriodicProbesButNotLinkEvents() throws {
        var settings: [String: InterfaceSettings] = [:]
        settings["wwan0"] = InterfaceSettings(dailyBudgetBytes: 1_000)
        var core = AgentCore(policy: policy(), interfaceSettings: settings)
        let wwan0 = try uplink("wwan0", index: 3)
        let generation = rounds(core.linksChanged(uplinks: [(wwan0, .wwan)], events: [], now: at(0)))["wwan0"]!
        _ = core.roundFinished(report("wwan0", online, bytes: 1_500), generation: generation, now: at(10))
        #expect(rounds(core.tick(now: at(60_010))).isEmpty)
        #expect(core.state(now: at(60_010), pid: 1).uplinks.first?.budgetExhausted == true)
        var noRoute = wwan0
        noRoute.defaultRoutes = []
        _ = core.linksChanged(uplinks: [(noRoute, .wwan)], events: [.defaultRouteRemoved(noRoute, defaultRoute(.ipv4))], now: at(60_020))
        let event = core.linksChanged(uplinks: [(wwan0, .wwan)], events: [.defaultRouteAdded(wwan0, defaultRoute(.ipv4))], now: at(60_030))
        #expect(rounds(event)["wwan0"] != nil)
    }

    @Test func vanishedUplinkGoesDownAndLosesPrimary() throws {
        var core = AgentCore(policy: policy())
        let eth0 = try uplink("eth0", index: 2)
        let generation = rounds(core.linksChanged(uplinks: [(eth0, .ethernet)], events: [], now: at(0)))["eth0"]!
        _ = core.roundFinished(report("eth0", online), generation: generation, now: at(1))
        let actions = core.linksChanged(uplinks: [], events: [.disappeared(eth0)], now: at(2))
        let events = hooks(actions)
        #expect(events.map(\.kind) == [.verdict, .primary])
        #expect(events[0].reason == "no-such-interface")
        #expect(events[1].primary == nil)
        #expect(events[1].previousPrimary == "eth0")
        #expect(core.uplinkNames.isEmpty)
    }

    @Test func roundOfAVanishedUplinkCannotDecideForItsSuccessor() throws {
        var core = AgentCore(policy: policy())
        let wwan0 = try uplink("wwan0", index: 3)
        let old = try #require(rounds(core.linksChanged(uplinks: [(wwan0, .wwan)], events: [], now: at(0)))["wwan0"])
        // The modem re-enumerates while its first round is in flight.
        _ = core.linksChanged(uplinks: [], events: [.disappeared(wwan0)], now: at(10))
        let reborn = try uplink("wwan0", index: 9)
        let fresh = try #require(rounds(core.linksChanged(uplinks: [(reborn, .wwan)], events: [.appeared(reborn)], now: at(20)))["wwan0"])
        #expect(fresh != old)
        _ = core.roundFinished(report("wwan0", online), generation: old, now: at(30))
        #expect(core.verdict(of: "wwan0")?.verdict == .unknown)
        _ = core.roundFinished(report("wwan0", limited), generation: fresh, now: at(40))
        #expect(core.verdict(of: "wwan0")?.verdict == .limited)
    }

    @Test func budgetSurvivesReEnumerationAndLiftsWithTheNextWindow() throws {
        var settings: [String: InterfaceSettings] = [:]
        settings["wwan0"] = InterfaceSettings(dailyBudgetBytes: 1_000)
        var core = AgentCore(policy: policy(), interfaceSettings: settings)
        let wwan0 = try uplink("wwan0", index: 3)
        let first = try #require(rounds(core.linksChanged(uplinks: [(wwan0, .wwan)], events: [], now: at(0)))["wwan0"])
        _ = core.roundFinished(report("wwan0", online, bytes: 1_500), generation: first, now: at(0))
        _ = core.linksChanged(uplinks: [], events: [.disappeared(wwan0)], now: at(10))
        let reborn = try uplink("wwan0", index: 9)
        let second = try #require(rounds(core.linksChanged(uplinks: [(reborn, .wwan)], events: [.appeared(reborn)], now: at(20)))["wwan0"])
        _ = core.roundFinished(report("wwan0", online, bytes: 100), generation: second, now: at(30))
        #expect(core.state(now: at(40), pid: 1).uplinks.first?.bytesToday == 1_600)
        // The periodic round is refused and postponed to the end of the window.
        #expect(rounds(core.tick(now: at(60_030))).isEmpty)
        #expect(core.nextWakeMilliseconds() == ByteBudget.dayMilliseconds)
        #expect(rounds(core.tick(now: at(ByteBudget.dayMilliseconds)))["wwan0"] != nil)
        #expect(core.state(now: at(ByteBudget.dayMilliseconds), pid: 1).uplinks.first?.budgetExhausted == false)
    }

    @Test func probeNowAfterAPortalHookOverridesTheSchedule() throws {
        var settings: [String: InterfaceSettings] = [:]
        settings["wlan0"] = InterfaceSettings(dailyBudgetBytes: 1_000)
        var core = AgentCore(policy: policy(), interfaceSettings: settings)
        let wlan0 = try uplink("wlan0", index: 4)
        let first = try #require(rounds(core.linksChanged(uplinks: [(wlan0, .wifi)], events: [], now: at(0)))["wlan0"])
        // Asked while the round is in flight: the next round follows right after it.
        #expect(rounds(core.probeNow("wlan0", now: at(5))).isEmpty)
        let next = rounds(core.roundFinished(report("wlan0", captive, bytes: 2_000), generation: first, now: at(10)))
        #expect(next["wlan0"] != nil)
        _ = core.roundFinished(report("wlan0", captive), generation: next["wlan0"]!, now: at(20))
        // Budget spent, schedule far away: probeNow still probes at once.
        #expect(rounds(core.probeNow("wlan0", now: at(30)))["wlan0"] != nil)
        #expect(rounds(core.probeNow("nosuch0", now: at(30))).isEmpty)
    }

    @Test func uplinkDroppedByConfigurationIsNotAnUplink() throws {
        var core = AgentCore(policy: policy())
        let eth0 = try uplink("eth0", index: 2)
        let generation = rounds(core.linksChanged(uplinks: [(eth0, .ethernet)], events: [], now: at(0)))["eth0"]!
        _ = core.roundFinished(report("eth0", online), generation: generation, now: at(1))
        let events = hooks(core.linksChanged(uplinks: [], events: [], now: at(2)))
        #expect(events.first?.reason == "not-an-uplink")
    }

    @Test func stateSnapshotShowsPortalOnlyWhenCaptive() throws {
        var core = AgentCore(policy: policy())
        let wlan0 = try uplink("wlan0", index: 4)
        let generation = rounds(core.linksChanged(uplinks: [(wlan0, .wifi)], events: [], now: at(0)))["wlan0"]!
        _ = core.roundFinished(report("wlan0", captive), generation: generation, now: at(1_000))
        let state = core.state(now: at(2_000), pid: 42)
        #expect(state.uplinks.first?.portalURL == "http://portal.example/login")
        #expect(state.uplinks.first?.sinceWallSeconds == 1_800_000_001)
        #expect(state.uplinks.first?.ipv4 == .captive)
    }
}

@Suite("State file format")
struct StateFileTests {
    @Test func roundTrip() throws {
        let state = AgentState(primary: "eth0", uplinks: [
            UplinkStatus(interface: "eth0", kind: .ethernet, verdict: .online, reason: "validated", sinceWallSeconds: 100,
                         ipv4: .online, bytesToday: 2_345, ipv4Reason: "validated", dnsSource: .dhclient),
            UplinkStatus(interface: "wwan0", kind: .wwan, verdict: .captive, reason: "redirect", sinceWallSeconds: 200,
                         ipv4: .captive, ipv6: .limited, bytesToday: 9, budgetBytes: 1_048_576, budgetExhausted: true,
                         portalURL: "http://portal.example/login?a=1", ipv4Reason: "redirect", ipv6Reason: "dns-failed",
                         dnsSource: .resolvConf),
        ], writtenWallSeconds: 300, pid: 4242)
        let text = StateFileFormat.encode(state)
        #expect(text.contains("\nprimary eth0\n"))
        #expect(text.contains("\nuplink eth0 ethernet online validated 100 online - 2345 - no - validated - dhclient\n"))
        #expect(text.contains("\nuplink wwan0 wwan captive redirect 200 captive limited 9 1048576 yes http://portal.example/login?a=1 redirect dns-failed resolv.conf\n"))
        #expect(try StateFileFormat.decode(text) == state)
    }

    @Test func linesWithoutTheLaterColumnsStillRead() throws {
        let decoded = try StateFileFormat.decode("format 1\nuplink eth0 ethernet online validated 100 online - 2345 - no -\n")
        #expect(decoded.uplinks.first?.ipv4 == .online)
        #expect(decoded.uplinks.first?.ipv4Reason == nil)
        #expect(decoded.uplinks.first?.dnsSource == nil)
    }

    @Test func statusJSONGivesEachFamilyItsVerdictAndReason() {
        let state = AgentState(primary: "eth0", uplinks: [
            UplinkStatus(interface: "eth0", kind: .ethernet, verdict: .online, reason: "validated", sinceWallSeconds: 1,
                         ipv4: .online, ipv6: .limited, ipv4Reason: "validated", ipv6Reason: "timeout", dnsSource: .resolvConf),
        ], writtenWallSeconds: 1, pid: 1)
        let json = state.json.serialized()
        #expect(json.contains(#""families":{"ipv4":{"verdict":"online","reason":"validated"},"ipv6":{"verdict":"limited","reason":"timeout"}}"#))
        #expect(json.contains(#""dns_source":"resolv.conf","dns_per_uplink":false"#))
    }

    @Test func portalURLFromTheNetworkStaysOneField() throws {
        let state = AgentState(primary: nil, uplinks: [
            UplinkStatus(interface: "wlan0", kind: .wifi, verdict: .captive, reason: "redirect", sinceWallSeconds: 1,
                         portalURL: "http://p.example/a b\nuplink evil"),
        ], writtenWallSeconds: 1, pid: 1, stopped: true)
        let text = StateFileFormat.encode(state)
        #expect(text.contains("http://p.example/a%20b%0Auplink%20evil"))
        let decoded = try StateFileFormat.decode(text)
        #expect(decoded.uplinks.count == 1)
        #expect(decoded.primary == nil)
        #expect(decoded.stopped)
    }

    @Test func unknownLinesAreIgnoredAndOtherFormatsRefused() throws {
        let text = "format 1\nfuture-key 7\nprimary -\n"
        #expect(try StateFileFormat.decode(text).uplinks.isEmpty)
        #expect(throws: StateFileFormat.DecodeError.self) { try StateFileFormat.decode("format 2\n") }
        #expect(throws: StateFileFormat.DecodeError.self) { try StateFileFormat.decode("hello\n") }
    }

    @Test func writtenTimeAndPidDoNotCountAsAChange() {
        let a = AgentState(primary: "eth0", uplinks: [], writtenWallSeconds: 1, pid: 1)
        var b = a
        b.writtenWallSeconds = 99
        #expect(a.sameContent(as: b))
        b.primary = nil
        #expect(!a.sameContent(as: b))
    }
}

@Suite("Agent configuration")
struct AgentConfigurationTests {
    @Test func agentKeys() throws {
        let configuration = try ConfigurationParser(fileName: "a.conf").parse("""
            [agent]
            interval = 10m
            suspect-interval = 500ms
            failures-to-leave-online = 3
            successes-to-return = 1
            hold-down = 0s
            probe-when-online = no
            priority = eth1 wifi, wwan ethernet
            wwan-daily-budget = 2MiB
            state-file = /tmp/uplinkd/state
            hooks-dir = /tmp/hooks.d
            hook-timeout = 10s
            [interface wwan0]
            daily-budget = 512KiB
            """)
        let agent = configuration.agent
        #expect(agent.intervalMilliseconds == 600_000)
        #expect(agent.suspectIntervalMilliseconds == 500)
        #expect(agent.failuresToLeaveOnline == 3)
        #expect(agent.successesToReturnOnline == 1)
        #expect(agent.holdDownMilliseconds == 0)
        #expect(!agent.probeWhenOnline)
        #expect(agent.priority == ["eth1", "wifi", "wwan", "ethernet"])
        #expect(agent.wwanDailyBudgetBytes == 2 << 20)
        #expect(agent.stateFilePath == "/tmp/uplinkd/state")
        #expect(agent.hooksDirectory == "/tmp/hooks.d")
        #expect(agent.hookTimeoutMilliseconds == 10_000)
        #expect(configuration.interfaceSettings["wwan0"]?.dailyBudgetBytes == 512 << 10)
    }

    @Test(arguments: [
        ("[agent]\ninterval = 5\n", "interval"),
        ("[agent]\ninterval = 500ms\n", "interval"),
        ("[agent]\nfailures-to-leave-online = 0\n", "failures-to-leave-online"),
        ("[agent]\nstate-file = run/state\n", "state-file"),
        ("[agent]\nhooks-dir = /etc/../tmp\n", "hooks-dir"),
        ("[agent]\npriority = eth0 bad/name\n", "priority"),
        ("[agent]\nwwan-daily-budget = lots\n", "wwan-daily-budget"),
        ("[agent]\nsleep = 1s\n", "sleep"),
        ("[interface wwan0]\ndaily-budget = 12\n", "daily-budget"),
    ])
    func badAgentValues(text: String, key: String) {
        do {
            _ = try ConfigurationParser(fileName: "a.conf").parse(text)
            Issue.record("expected an error for \(text)")
        } catch {
            #expect(error.line == 2)
            #expect(error.key == key)
        }
    }
}
